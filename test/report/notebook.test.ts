import { describe, expect, it } from 'vitest';
import { notebookSchema } from '../../src/report/notebook-schema.ts';
import { renderMarkdownReport } from '../../src/report/markdown-report.ts';
import { renderNotebook } from '../../src/report/notebook.ts';
import { prepareReport } from '../../src/report/prepared-report.ts';
import type { ExecutionRecord, TraceRecord } from '../../src/trace/schema.ts';
import { makeSyntheticTrace } from '../fixtures/traces/synthetic-trace.ts';

function withStatuses(statuses: ExecutionRecord['result']['status'][]): TraceRecord[] {
  const trace = makeSyntheticTrace({ rounds: statuses.length, charts: 0, figures: 0 });
  let index = 0;
  return trace.records.map((record) => {
    if (record.type !== 'execution') return record;
    const status = statuses[index++] ?? 'ok';
    return {
      ...record,
      result: {
        ...record.result,
        status,
        value: status === 'ok' ? '(4, 2)' : null,
        error:
          status === 'error'
            ? {
                name: 'KeyError',
                value: "'x'",
                traceback: "Traceback (most recent call last):\nKeyError: 'x'",
              }
            : null,
        statusDetail: status === 'timeout' ? 'The cell ran past its 120 s limit.' : null,
      },
    };
  });
}

describe('renderNotebook', () => {
  it('tags failed cells to run on past them and skips cells that hung or crashed', async () => {
    const notebook = renderNotebook(
      await prepareReport(withStatuses(['ok', 'error', 'timeout', 'crashed', 'ok'])),
    );
    const code = notebook.cells.filter((cell) => cell.cell_type === 'code');
    expect(code.map((cell) => [cell.id, cell.metadata.tags ?? [], cell.execution_count])).toEqual([
      ['datalyst-setup', [], 1],
      ['E1', [], 2],
      ['E2', ['raises-exception'], 3],
      ['E3', ['skip-execution'], null],
      ['E4', ['skip-execution'], null],
      ['E5', [], 4],
    ]);
    const failed = code.find((cell) => cell.id === 'E2');
    expect(failed?.outputs.at(-1)).toEqual({
      output_type: 'error',
      ename: 'KeyError',
      evalue: "'x'",
      traceback: ['Traceback (most recent call last):', "KeyError: 'x'"],
    });
    const echoed = code.find((cell) => cell.id === 'E1');
    expect(echoed?.outputs.at(-1)).toEqual({
      output_type: 'execute_result',
      execution_count: 2,
      data: { 'text/plain': ['(4, 2)'] },
      metadata: {},
    });
    expect(
      notebook.cells.some(
        (cell) =>
          cell.cell_type === 'markdown' && [cell.source].flat().join('').includes('ended with `timeout`'),
      ),
    ).toBe(true);
  });

  it('writes the reasoning as markdown cells with raw HTML defused', async () => {
    const trace = makeSyntheticTrace({
      rounds: 1,
      charts: 0,
      figures: 0,
      answer: 'Done <script>alert(1)</script>',
    });
    const notebook = renderNotebook(await prepareReport(trace.records));
    const markdown = notebook.cells
      .filter((cell) => cell.cell_type === 'markdown')
      .map((cell) => [cell.source].flat().join(''));
    expect(markdown[0]).toContain('# Which regions grow fastest');
    expect(markdown.some((text) => text.startsWith('**Analyze** (round 1)'))).toBe(true);
    expect(markdown.at(-1)).toBe('## Answer\n\nDone &lt;script>alert(1)&lt;/script>');
  });

  it('holds the final answer once, under "## Answer", not also as the answer step before it', async () => {
    const trace = makeSyntheticTrace({ rounds: 2, charts: 0, figures: 0, answer: 'Sales rose 12% in Q2.' });
    const notebook = renderNotebook(await prepareReport(trace.records));
    const holding = notebook.cells
      .map((cell) => [cell.source].flat().join(''))
      .filter((source) => source.includes('Sales rose 12% in Q2.'));
    expect(holding).toEqual(['## Answer\n\nSales rose 12% in Q2.']);
  });

  it('titles a failed run or one that read no data as the Markdown report does ("Failed: …", "No data: …")', async () => {
    const failed = makeSyntheticTrace({ rounds: 2, charts: 0, figures: 0, outcome: 'max-rounds' }).records;
    const [start, profile, end] = [failed[0], failed[1], failed.at(-1)];
    if (start?.type !== 'run-start' || end?.type !== 'run-end') throw new Error('unexpected synthetic trace');
    const noData: TraceRecord[] = [
      start,
      ...(profile?.type === 'workspace-profile' ? [profile] : []),
      {
        ...end,
        rounds: 0,
        answer: null,
        termination: { reason: 'no-data', detail: 'notes.pdf holds no table' },
      },
    ];
    for (const [records, title] of [
      [failed, '# Failed: Which regions grow fastest'],
      [noData, '# No data: Which regions grow fastest'],
    ] as const) {
      const report = await prepareReport(records);
      const heading = [renderNotebook(report).cells[0]?.source ?? ''].flat().join('').split('\n')[0];
      expect(heading).toMatch(new RegExp(`^${title.replace(/[?]/g, '\\?')}`));
      expect(heading).toBe(renderMarkdownReport(report).markdown.split('\n')[0]);
    }
  });

  it('says what happened in a run that read nothing as text: a file name is no live link or heading', async () => {
    const records = makeSyntheticTrace({ rounds: 1, charts: 0, figures: 0 }).records;
    const [start, end] = [records[0], records.at(-1)];
    if (start?.type !== 'run-start' || end?.type !== 'run-end') throw new Error('unexpected synthetic trace');
    const hostileName = 'x[y](https:evil.example).xlsx\n## b.xlsx';
    const report = await prepareReport([
      start,
      {
        ...end,
        rounds: 0,
        answer: null,
        termination: { reason: 'no-data', detail: `${hostileName}: no table` },
      },
    ]);
    const intro = [renderNotebook(report).cells[0]?.source ?? ''].flat().join('');
    expect(intro).not.toContain('](https:evil.example)');
    expect(intro).toContain('\\[y\\]');
    expect(intro.split('\n').some((line) => line.startsWith('## b.xlsx'))).toBe(false);
  });

  it('is checked against nbformat 4.5: ids are required and unique', () => {
    const cell = { id: 'a', cell_type: 'markdown', metadata: {}, source: 'x' };
    const notebook = { nbformat: 4, nbformat_minor: 5, metadata: {}, cells: [cell] };
    expect(notebookSchema.safeParse(notebook).success).toBe(true);
    expect(notebookSchema.safeParse({ ...notebook, cells: [cell, cell] }).success).toBe(false);
    expect(notebookSchema.safeParse({ ...notebook, cells: [{ ...cell, id: 'has space' }] }).success).toBe(
      false,
    );
    expect(
      notebookSchema.safeParse({ ...notebook, cells: [{ cell_type: 'markdown', metadata: {}, source: 'x' }] })
        .success,
    ).toBe(false);
  });
});
