import type { GroundingSource } from './number-grounding.ts';
import { cleanOutputText } from './output-text.ts';
import type { ExecutionRecord } from './schema.ts';

/** The parts of a cell's result that grounding reads (a trace's execution record and a live cell result both have them). */
export type GroundedResult = Pick<ExecutionRecord['result'], 'stdout' | 'value' | 'tables'>;

/** What the answer's numbers are checked against: stdout, the echoed value, table cells. */
export function groundingSources(executions: readonly ExecutionRecord[]): GroundingSource[] {
  return executions.map((execution) => groundingSource(execution.outputId, execution.result));
}

/** One output's grounding text, from a recorded execution or a cell result as it arrives. */
export function groundingSource(outputId: string, result: GroundedResult): GroundingSource {
  const tableText = result.tables
    .map((table) =>
      [
        table.columns.join(' '),
        ...table.rows.map((row, rowIndex) =>
          [table.index[rowIndex] ?? '', ...row.map((cell) => String(cell))].join(' '),
        ),
      ].join('\n'),
    )
    .join('\n');
  return {
    outputId,
    text: [cleanOutputText(result.stdout.text), result.value ?? '', tableText].join('\n'),
  };
}
