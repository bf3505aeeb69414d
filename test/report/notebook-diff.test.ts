import { describe, expect, it } from 'vitest';
import { compareNotebooks } from '../../src/report/index.ts';
import type { Notebook, NotebookOutput } from '../../src/report/index.ts';

function notebook(
  cells: Array<{ id: string; outputs: NotebookOutput[]; metadata?: Record<string, unknown> }>,
): Notebook {
  return {
    nbformat: 4,
    nbformat_minor: 5,
    metadata: {},
    cells: cells.map(({ id, outputs, metadata }) => ({
      id,
      cell_type: 'code',
      metadata: metadata ?? {},
      source: '',
      execution_count: null,
      outputs,
    })),
  };
}
const stdout = (text: string): NotebookOutput => ({ output_type: 'stream', name: 'stdout', text });
const stderr = (text: string): NotebookOutput => ({ output_type: 'stream', name: 'stderr', text });
const chart = (spec: Record<string, unknown>): NotebookOutput => ({
  output_type: 'display_data',
  data: { 'application/vnd.vegalite.v5+json': spec, 'text/plain': '<VegaLite 5 object>' },
  metadata: {},
});

describe('compareNotebooks', () => {
  it('finds the cells whose stdout, value, error or chart changed, and ignores stderr and key order', () => {
    const recorded = notebook([
      { id: 'setup', outputs: [], metadata: { datalyst: { setup: true } } },
      { id: 'E1', outputs: [stdout('rows: 1194\nmean 6.39\n'), stderr('FutureWarning: old')] },
      { id: 'E2', outputs: [chart({ mark: 'bar', data: { values: [1] } })] },
      { id: 'E3', outputs: [{ output_type: 'error', ename: 'KeyError', evalue: "'x'", traceback: [] }] },
      { id: 'E4', outputs: [], metadata: { tags: ['skip-execution'] } },
      { id: 'E5', outputs: [stdout('gone')] },
    ]);
    const rerun = notebook([
      { id: 'setup', outputs: [stdout('anything')] },
      { id: 'E1', outputs: [stdout('rows: 1184\nmean 6.39\n'), stderr('DeprecationWarning: new')] },
      { id: 'E2', outputs: [chart({ data: { values: [1] }, mark: 'bar' })] },
      { id: 'E3', outputs: [stdout('no error now')] },
      { id: 'E4', outputs: [stdout('skipped in the run')] },
    ]);
    const comparison = compareNotebooks(recorded, rerun);
    expect(comparison.compared).toBe(3);
    expect(comparison.missing).toEqual(['E5']);
    expect(comparison.differences).toEqual([
      { cellId: 'E1', parts: ['stdout'], example: { recorded: 'rows: 1194', rerun: 'rows: 1184' } },
      { cellId: 'E3', parts: ['stdout', 'error'], example: { recorded: '(nothing)', rerun: 'no error now' } },
    ]);
  });
});
