import { describe, expect, it } from 'vitest';
import { dataSectionMarkdown } from '../../src/report/data-section-markdown.ts';
import { outcomePresentation } from '../../src/report/outcome-look.ts';
import { buildRunView, stripCodeFence } from '../../src/report/run-view.ts';
import type { TraceRecord } from '../../src/trace/schema.ts';
import { makeSyntheticTrace } from '../fixtures/traces/synthetic-trace.ts';

describe('buildRunView', () => {
  it('pairs each code step with its execution and keeps the order of the run', () => {
    const view = buildRunView(makeSyntheticTrace({ rounds: 2, charts: 0, figures: 0 }).records);
    expect(
      view.process.map((entry) =>
        entry.kind === 'step'
          ? entry.step.kind
          : entry.kind === 'cell'
            ? `cell:${entry.execution?.outputId ?? 'none'}`
            : 'notice',
      ),
    ).toEqual(['analyze', 'cell:E1', 'understand', 'analyze', 'cell:E2', 'understand', 'answer']);
    expect(view.outcome).toBe('answered');
    expect(view.outcomeMessage).toBeNull();
  });

  it('keeps a code step that never ran, and sums usage when run-end is missing', () => {
    const records = makeSyntheticTrace({
      rounds: 1,
      charts: 0,
      figures: 0,
      outcome: 'incomplete',
    }).records.filter((record) => record.type !== 'execution');
    const extra: TraceRecord = {
      type: 'step',
      round: 2,
      at: '2025-03-01T10:00:00.000Z',
      kind: 'code',
      text: '```python\nprint(1)\n',
      closed: false,
    };
    const view = buildRunView([...records, extra]);
    const cells = view.process.filter((entry) => entry.kind === 'cell');
    expect(cells.map((entry) => (entry.kind === 'cell' ? entry.execution : 'other'))).toEqual([null, null]);
    expect(view.outcome).toBe('incomplete');
    expect(view.usage.promptTokens).toBeGreaterThan(0);
    expect(view.rounds).toBe(2);
  });

  it('explains cancelled and unanswered runs in one sentence', () => {
    expect(
      buildRunView(makeSyntheticTrace({ rounds: 1, outcome: 'cancelled', charts: 0, figures: 0 }).records)
        .outcomeMessage,
    ).toBe('This run was cancelled before it finished. Ctrl-C. There is no answer.');
    expect(
      buildRunView(makeSyntheticTrace({ rounds: 1, outcome: 'max-rounds', charts: 0, figures: 0 }).records)
        .outcome,
    ).toBe('not-answered');
  });

  it('says a cancel once, and puts each detail in a sentence of its own, not after a colon', () => {
    const endedWith = (reason: 'cancelled' | 'max-rounds' | 'no-data', detail: string) =>
      buildRunView(
        makeSyntheticTrace({ rounds: 1, outcome: 'cancelled', charts: 0, figures: 0 }).records.map(
          (record): TraceRecord =>
            record.type === 'run-end' ? { ...record, answer: null, termination: { reason, detail } } : record,
        ),
      );
    expect(endedWith('cancelled', 'The run was cancelled.').outcomeMessage).toBe(
      'This run was cancelled before it finished. There is no answer.',
    );
    expect(
      endedWith('cancelled', 'The caller stopped reading the turn before it ended.').outcomeMessage,
    ).toBe(
      'This run was cancelled before it finished. The caller stopped reading the turn before it ended. There is no answer.',
    );
    expect(endedWith('max-rounds', 'the run reached its limit of 30 rounds').outcomeMessage).toBe(
      'This run ended without an answer (the round limit was reached). The run reached its limit of 30 rounds.',
    );
    const noData = 'No file of the workspace could be read, so nothing was analysed. blob.csv: not text.';
    expect(outcomePresentation(endedWith('no-data', noData)).happened).toBe(noData);
    expect(outcomePresentation(endedWith('no-data', '')).happened).toBe(
      'No file in the workspace held data that could be read, so nothing was analysed.',
    );
  });

  it('says which data files could not be read and why, in words for a person, and to repair them, when they are there but damaged', () => {
    const trace = makeSyntheticTrace({ rounds: 1, outcome: 'cancelled', charts: 0, figures: 0 }).records;
    const start = trace[0];
    const end = trace.at(-1);
    if (start?.type !== 'run-start' || end?.type !== 'run-end') throw new Error('unexpected synthetic trace');
    const file = (path: string, format: 'excel' | 'text', error: string | null) => ({
      path,
      sizeBytes: 3000,
      format,
      tables: [],
      error,
      notes: [],
    });
    // The run's detail as the loop wrote it: "nothing was analysed" twice over, pandas' hint, a double period.
    const detail =
      'No file of the workspace could be read, so nothing was analysed. more.xlsx: BadZipFile: File is not a zip file; sales.xlsx: ValueError: Excel file format cannot be determined, you must specify an engine manually..';
    const view = buildRunView([
      start,
      {
        type: 'workspace-profile',
        at: start.startedAt,
        profile: {
          truncated: false,
          files: [
            file('README.md', 'text', null),
            file('more.xlsx', 'excel', 'BadZipFile: File is not a zip file'),
            file(
              'sales.xlsx',
              'excel',
              'ValueError: Excel file format cannot be determined, you must specify an engine manually.',
            ),
          ],
        },
      },
      { ...end, rounds: 0, answer: null, termination: { reason: 'no-data', detail } },
    ]);
    const presented = outcomePresentation(view);
    expect(presented.happened).toBe(
      'No data file of the workspace could be read, so nothing was analysed: more.xlsx (File is not a zip file); sales.xlsx (Excel file format cannot be determined).',
    );
    expect(presented.todo).toMatch(
      /^The files listed under Data could not be read: .*repair or export them again/,
    );
    expect(presented.todo).not.toContain('Put the data files');
    // report.md lists the files without a table under Data, as report.html does.
    expect(dataSectionMarkdown(view.profile).join('\n')).toContain(
      [
        '### Files without a table',
        '',
        '- README.md (text): no table in it',
        '- more.xlsx (excel): BadZipFile: File is not a zip file',
        '- sales.xlsx (excel): ValueError: Excel file format cannot be determined, you must specify an engine manually.',
      ].join('\n'),
    );
  });
});

describe('stripCodeFence', () => {
  it('takes the code out of a python fence, closed or not', () => {
    expect(stripCodeFence('```python\nx = 1\n```')).toBe('x = 1');
    expect(stripCodeFence('```python\nx = 1\n')).toBe('x = 1');
    expect(stripCodeFence('x = 2')).toBe('x = 2');
  });
});
