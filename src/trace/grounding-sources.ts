import type { GroundingSource } from './number-grounding.ts';
import { cleanOutputText } from './output-text.ts';
import type { ExecutionRecord } from './schema.ts';

/** What the answer's numbers are checked against: stdout, the echoed value, table cells. */
export function groundingSources(executions: readonly ExecutionRecord[]): GroundingSource[] {
  return executions.map((execution) => {
    const { result } = execution;
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
      outputId: execution.outputId,
      text: [cleanOutputText(result.stdout.text), result.value ?? '', tableText].join('\n'),
    };
  });
}
