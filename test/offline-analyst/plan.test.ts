import { describe, expect, it } from 'vitest';
import {
  column,
  csvFile,
  firstMessage,
  healthyKernel,
  runCanned,
  unreadableFile,
} from './support/canned-conversation.ts';

const numbersAndCategories = [
  csvFile('data.csv', [
    column('price', 'number', 'float64'),
    column('units', 'integer', 'int64'),
    column('shop', 'category'),
  ]),
];

describe('the offline analyst plan', () => {
  it('goes through its steps once and then answers', () => {
    const run = runCanned(
      firstMessage('Generate a data science report.', numbersAndCategories),
      healthyKernel({ kinds: { number: 2, category: 1 } }),
    );
    expect(run.stages).toEqual([
      'setup',
      'prepare',
      'registry',
      'load',
      'overview',
      'distributions',
      'categories',
      'correlations',
      'outliers',
    ]);
    expect(run.answer).not.toBeNull();
  });

  it('adds the time step for date columns and the focus step for columns the instruction names', () => {
    const files = [
      csvFile('visits.csv', [
        column('date', 'datetime', 'datetime64[ns]'),
        column('Daily Visits', 'integer'),
      ]),
    ];
    const run = runCanned(
      firstMessage('How do daily_visits change over time?', files),
      healthyKernel({ focus: ['visits.csv'], kinds: { datetime: 1, number: 1 } }),
    );
    expect(run.stages).toContain('time');
    expect(run.stages.at(-1)).toBe('focus');
    expect(run.turns.find((turn) => turn.includes('offline-analyst step: focus'))).toContain(
      'wanted = ["dailyvisits"]',
    );
  });

  it('skips steps the facts leave nothing to do for', () => {
    const run = runCanned(
      firstMessage('Generate a data science report.', numbersAndCategories),
      healthyKernel({ kinds: { category: 2 } }),
    );
    expect(run.stages).not.toContain('distributions');
    expect(run.stages).not.toContain('outliers');
    expect(run.stages).not.toContain('time');
    expect(run.stages).toContain('categories');
  });

  it('tries the tolerant reader for files the profile could not read, and lists the rest', () => {
    const files = [
      ...numbersAndCategories,
      unreadableFile('broken.csv', 'csv', 'UnicodeDecodeError: cannot decode'),
      unreadableFile('notes.md', 'text', null),
      unreadableFile('scan.pdf', 'unsupported', null),
    ];
    const run = runCanned(firstMessage('Report.', files), healthyKernel({}));
    expect(run.stages.slice(0, 5)).toEqual(['setup', 'prepare', 'registry', 'load', 'load-fallback']);
    const fallback = run.turns[4] ?? '';
    expect(fallback).toContain('("broken.csv", None),');
    expect(fallback).not.toContain('notes.md');
    const load = run.turns[3] ?? '';
    expect(load).toContain('("notes.md", "text, not a table"),');
    expect(load).toContain('("scan.pdf", "no reader for this kind of file"),');
  });

  it('re-reads tables whose load failed in the load step', () => {
    const run = runCanned(
      firstMessage('Report.', numbersAndCategories),
      healthyKernel({ failed: [['data.csv', '']] }),
    );
    expect(run.stages).toContain('load-fallback');
    expect(run.turns[4]).toContain('("data.csv", None),');
  });

  it('looks for a key joining the tables when three or more distinct ones are loaded', () => {
    const run = runCanned(
      firstMessage('Report.', numbersAndCategories),
      healthyKernel({ tables: 5, unique: 3 }),
    );
    expect(run.stages).toContain('relations');
    const single = runCanned(
      firstMessage('Report.', numbersAndCategories),
      healthyKernel({ tables: 3, unique: 1 }),
    );
    expect(single.stages).not.toContain('relations');
  });

  it('never loops: when every analysis cell fails it still answers, each step tried once', () => {
    const failing = (stage: string): string =>
      ['setup', 'prepare', 'registry', 'load'].includes(stage)
        ? healthyKernel({ kinds: { number: 3, category: 2, datetime: 1 } })(stage, 1)
        : `[Error]:\nTraceback (most recent call last):\n  File "<cell>", line 3\nValueError: cannot reshape array of size 7`;
    const run = runCanned(firstMessage('Compare price by shop.', numbersAndCategories), failing);
    expect(run.answer).not.toBeNull();
    expect(new Set(run.stages).size).toBe(run.stages.length);
    expect(run.answer).toContain('stopped with `ValueError`');
  });

  it('answers at once when the first steps fail', () => {
    const run = runCanned(firstMessage('Report.', numbersAndCategories), (stage) =>
      stage === 'setup' ? '[Error]:\nModuleNotFoundError: No module named pandas' : '',
    );
    expect(run.stages).toEqual(['setup']);
    expect(run.answer).toContain('could not be analysed');
  });

  it('loads again once after the kernel lost its state, then carries on', () => {
    const healthy = healthyKernel({});
    const run = runCanned(firstMessage('Report.', numbersAndCategories), (stage, call) =>
      stage === 'distributions' && call === 1
        ? "[Error]:\nNameError: name 'tables' is not defined\n[the kernel was restarted: variables and imports are gone, re-run what you need]"
        : healthy(stage, call),
    );
    expect(run.stages).toEqual([
      'setup',
      'prepare',
      'registry',
      'load',
      'overview',
      'distributions',
      'setup',
      'prepare',
      'registry',
      'load',
      'distributions',
      'categories',
      'correlations',
      'outliers',
    ]);
  });

  it('does not reload a second time when the state keeps getting lost', () => {
    const lost = "[Error]:\nNameError: name 'fmt' is not defined";
    const run = runCanned(firstMessage('Report.', numbersAndCategories), (stage) =>
      ['setup', 'prepare', 'registry', 'load'].includes(stage) ? healthyKernel({})(stage, 1) : lost,
    );
    expect(run.answer).not.toBeNull();
    expect(run.stages.filter((stage) => stage === 'load')).toHaveLength(2);
    expect(run.stages.length).toBeLessThanOrEqual(16);
  });

  it('reloads with less memory after an out-of-memory restart, says so, and stops at a second loss', () => {
    const healthy = healthyKernel({});
    const restarted =
      '[Error]:\nKernel died (memory limit)\n[the kernel was restarted: variables and imports are gone, re-run what you need]';
    const run = runCanned(firstMessage('Report.', numbersAndCategories), (stage, call) =>
      (stage === 'load' && call === 1) || (stage === 'distributions' && call === 1)
        ? restarted
        : healthy(stage, call),
    );
    // The load that ran out of memory is not repeated as it was: the reload keeps a quarter of the rows.
    const prepares = run.turns.filter((turn) => turn.includes('# offline-analyst step: prepare'));
    expect(prepares[0]).toContain('MAX_ROWS = 200000');
    expect(prepares[1]).toContain('MAX_ROWS = 50000');
    expect(prepares[1]).toContain('reloaded with less memory');
    const loads = run.turns.filter((turn) => turn.includes('# offline-analyst step: load\n'));
    expect(loads[1]).toContain(`LARGE_FILE_BYTES = ${(32 * 1024 * 1024) / 8}`);
    // The second loss ends the plan: no cell runs on tables that are gone.
    expect(run.stages.at(-1)).toBe('distributions');
    expect(run.answer).toContain('lost its state again');
  });

  it('stops at its cell limit', () => {
    const run = runCanned(firstMessage('Report.', numbersAndCategories), healthyKernel({}), {
      analyst: { maxCells: 4 },
    });
    expect(run.stages).toEqual(['setup', 'prepare', 'registry', 'load']);
    expect(run.answer).toContain('limit of cells');
  });

  it('carries on when a cell printed nothing it can read', () => {
    const run = runCanned(firstMessage('Report.', numbersAndCategories), () => '');
    expect(run.answer).not.toBeNull();
    expect(run.stages).toContain('outliers');
  });

  it('reads results sent as `execute` messages and as `user` messages wrapped in <Execute> alike', () => {
    const first = firstMessage('Which shop sells the most units?', numbersAndCategories);
    const asExecute = runCanned(first, healthyKernel({}), { role: 'execute' });
    const asUser = runCanned(first, healthyKernel({}), { role: 'user' });
    expect(asUser.turns).toEqual(asExecute.turns);
  });
});
