import type { Notebook, NotebookOutput } from './notebook-schema.ts';

/**
 * Which code cells of a re-executed analysis.ipynb gave other outputs than
 * the ones recorded. Compared: stdout, the echoed value (text/plain), the
 * error (name and message), the number of images, and each vega-lite chart's
 * spec. Not compared: stderr (warnings vary with library versions and are
 * not the analysis's result), image bytes (matplotlib's PNG encoding and
 * metadata change between builds) and execution counts.
 */
export interface NotebookCellDifference {
  /** The cell's id: the run's output id (E1, E2, …) for executed cells. */
  cellId: string;
  /** What differs, e.g. `stdout`, `value`, `error`, `images`, `chart`. */
  parts: string[];
  /** The first line that differs, recorded and re-run, for the first part that is text. */
  example: { recorded: string; rerun: string } | null;
}

export interface NotebookComparison {
  /** Code cells compared (the setup cell and cells not executed in the run are left out). */
  compared: number;
  differences: NotebookCellDifference[];
  /** Recorded cells the re-executed notebook does not have. */
  missing: string[];
}

interface CellFacts {
  stdout: string;
  value: string;
  error: string;
  images: string;
  chart: string;
}

/** The code cells `compareNotebooks` compares: those the run executed (not the setup cell). */
export function comparableCellCount(notebook: Notebook): number {
  return notebook.cells.filter((cell) => cell.cell_type === 'code' && isComparable(cell.metadata)).length;
}

export function compareNotebooks(recorded: Notebook, rerun: Notebook): NotebookComparison {
  const rerunCells = new Map(rerun.cells.map((cell) => [cell.id, cell]));
  const differences: NotebookCellDifference[] = [];
  const missing: string[] = [];
  let compared = 0;
  for (const cell of recorded.cells) {
    if (cell.cell_type !== 'code' || !isComparable(cell.metadata)) continue;
    const other = rerunCells.get(cell.id);
    if (other?.cell_type !== 'code') {
      missing.push(cell.id);
      continue;
    }
    compared += 1;
    const before = factsOf(cell.outputs);
    const after = factsOf(other.outputs);
    const parts = (Object.keys(before) as Array<keyof CellFacts>).filter(
      (part) => before[part] !== after[part],
    );
    if (parts.length === 0) continue;
    const textPart = parts.find((part) => part === 'stdout' || part === 'value' || part === 'error');
    differences.push({
      cellId: cell.id,
      parts,
      example: textPart ? firstDifferentLine(before[textPart], after[textPart]) : null,
    });
  }
  return { compared, differences, missing };
}

/** Cells the run executed: not the setup cell, not ones tagged skip-execution (timed out, crashed, never run). */
function isComparable(metadata: { tags?: string[] | undefined } & Record<string, unknown>): boolean {
  const datalyst = metadata.datalyst as { setup?: unknown; executed?: unknown } | undefined;
  if (datalyst?.setup === true || datalyst?.executed === false) return false;
  return !(metadata.tags ?? []).includes('skip-execution');
}

function factsOf(outputs: readonly NotebookOutput[]): CellFacts {
  const facts: CellFacts = { stdout: '', value: '', error: '', images: '0', chart: '' };
  let images = 0;
  const charts: string[] = [];
  for (const output of outputs) {
    if (output.output_type === 'stream') {
      if (output.name === 'stdout') facts.stdout += joined(output.text);
    } else if (output.output_type === 'error') {
      facts.error = `${output.ename}: ${output.evalue}`;
    } else {
      const chart = Object.entries(output.data).find(([mime]) =>
        mime.startsWith('application/vnd.vegalite.'),
      );
      if (chart) charts.push(canonicalJson(chart[1]));
      else if ('image/png' in output.data || 'image/svg+xml' in output.data) images += 1;
      if (output.output_type === 'execute_result' && !chart) {
        const text = output.data['text/plain'];
        if (typeof text === 'string' || Array.isArray(text)) facts.value = joined(text);
      }
    }
  }
  facts.stdout = facts.stdout.trim();
  facts.value = facts.value.trim();
  facts.images = String(images);
  facts.chart = charts.join('\n');
  return facts;
}

function joined(text: string | string[]): string {
  return Array.isArray(text) ? text.join('') : text;
}

/** JSON with keys sorted, so that two specs that differ only in key order are equal. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    typeof item === 'object' && item !== null && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : item,
  );
}

function firstDifferentLine(recorded: string, rerun: string): { recorded: string; rerun: string } {
  const a = recorded === '' ? [] : recorded.split('\n');
  const b = rerun === '' ? [] : rerun.split('\n');
  for (let index = 0; index < Math.max(a.length, b.length); index++)
    if (a[index] !== b[index])
      return {
        recorded: (a[index] ?? '(nothing)').slice(0, 200),
        rerun: (b[index] ?? '(nothing)').slice(0, 200),
      };
  return { recorded: '', rerun: '' };
}
