import { cp, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentEvent, TurnResult } from '../../src/agent/events.ts';
import { createOfflineAnalyst } from '../../src/agent/offline-analyst/index.ts';
import { openThread } from '../../src/agent/thread/index.ts';
import type { Thread } from '../../src/agent/thread/index.ts';
import { renderRunFolder } from '../../src/report/index.ts';
import type { TerminationReason } from '../../src/trace/schema.ts';
import { numbersMissingFrom } from './support/answer-numbers.ts';
import { useTempDirs } from '../support/temp-dirs.ts';

/**
 * The offline analyst's follow-ups in a thread, through the real sandbox: what
 * a reviewer found misleading. A breakdown added up columns that do not add
 * (a percentage, a month), left out the rows with no group without a word,
 * and a question naming a table was answered from the workspace profile
 * (rows and column names the kernel does not have) instead of the tables the
 * kernel loaded.
 */

const examples = path.resolve(import.meta.dirname, '../../workspace-examples');
const tempDirs = useTempDirs();

interface Reply {
  answer: string;
  /** What every cell of the turn printed. */
  outputs: string[];
  termination: TerminationReason;
  /** The analyst's question back, when the turn ended `asked`. */
  ask: string | null;
}

/** A thread of the offline analyst on a copy of `files`; its first question is the whole analysis. */
async function threadOn(
  files: Record<string, string>,
  askMode: 'pause' | 'reply' = 'pause',
): Promise<{ thread: Thread; outputs: string[] }> {
  const workspaceDir = await tempDirs.make('datalyst-follow-up-ws-');
  const runs = await tempDirs.make('datalyst-follow-up-runs-');
  for (const [name, source] of Object.entries(files)) {
    if (source.includes('\n')) await writeFile(path.join(workspaceDir, name), source);
    else await cp(source, path.join(workspaceDir, name));
  }
  const thread = await openThread({
    workspaceDir,
    outDir: path.join(runs, 'thread'),
    model: createOfflineAnalyst(),
    askMode,
  });
  const first = await ask(thread, 'Describe the data');
  return { thread, outputs: first.outputs };
}

async function ask(thread: Thread, question: string): Promise<Reply> {
  const events: AgentEvent[] = [];
  for await (const event of thread.ask(question)) events.push(event);
  const end = events.at(-1);
  if (end?.type !== 'turn-end') throw new Error(`the turn did not end: ${JSON.stringify(end)}`);
  return {
    answer: end.result.answer ?? '',
    outputs: events.flatMap((event) => (event.type === 'execution-end' ? [event.result.stdout.text] : [])),
    termination: end.result.termination.reason,
    ask: end.result.ask,
  };
}

describe('a follow-up breakdown on the sales example', () => {
  let thread: Thread;
  let earlier: string[];
  let reply: Reply;

  beforeAll(async () => {
    ({ thread, outputs: earlier } = await threadOn({
      'orders.csv': path.join(examples, 'sales', 'orders.csv'),
    }));
    reply = await ask(thread, 'correlation between discount_pct and units?');
  });
  afterAll(async () => {
    await thread?.close();
  });

  it('does not add up a percentage: discount_pct is compared by its mean per group', () => {
    expect(reply.answer).not.toMatch(/total `discount_pct`/);
    expect(reply.answer).toContain(
      '- By `region` in `orders.csv`: `discount_pct` is a percentage, rate or ratio (its name says so, and its values lie between 0 and 100), so it is compared by its mean per group, not added up: highest for `West` (9.20), lowest for `East` (8.34).',
    );
    expect(reply.answer).toMatch(/`discount_pct` and `units` \(`orders\.csv`\): r = 0\.643/);
  });

  it('quotes only numbers a cell printed', () => {
    expect(numbersMissingFrom(reply.answer, [...earlier, ...reply.outputs])).toEqual([]);
  });
});

describe('a follow-up that names no column or table', () => {
  let thread: Thread;
  let declined: Reply;
  let reply: Reply;
  const report = { md: '', html: '' };

  beforeAll(async () => {
    ({ thread } = await threadOn({ 'orders.csv': path.join(examples, 'sales', 'orders.csv') }));
    declined = await ask(thread, 'Why did sales fall?');
    // The report as it stands while the question back waits for its reply.
    const outDir = await tempDirs.make('datalyst-follow-up-report-');
    await renderRunFolder(thread.outDir, { outDir, formats: ['md', 'html'] });
    report.md = await readFile(path.join(outDir, 'report.md'), 'utf8');
    report.html = await readFile(path.join(outDir, 'report.html'), 'utf8');
    reply = await ask(thread, 'revenue by region');
  });
  afterAll(async () => {
    await thread?.close();
  });

  it('is not answered: the turn ends asked, with the question back naming what can be asked about', () => {
    expect(declined.termination).toBe('asked');
    expect(declined.answer).toBe('');
    expect(declined.outputs).toEqual([]);
    expect(declined.ask).toMatch(/^Which column or table is this question about\?/);
    expect(declined.ask).toContain('`revenue`');
    expect(declined.ask).toContain('Files: `orders.csv`.');
    expect(thread.openQuestion).toBeNull(); // the reply was asked
  });

  it('shows in the report as a question of the offline analyst that waits for a reply: not failed, not answered', () => {
    expect(report.md).toMatch(/^# Waiting for a reply: /);
    expect(report.md).toContain('The offline analyst asked the user a question');
    expect(report.md).toContain(
      '**The offline analyst asked:**\n\nWhich column or table is this question about?',
    );
    expect(report.md).toContain('`revenue`');
    expect(report.md).not.toMatch(/The model asked|cannot answer/);
    expect(report.html).toContain('<p class="label">The offline analyst asked</p>');
    expect(report.html).toContain('<code>revenue</code>');
    expect(report.html).not.toMatch(/>Failed<|>Answered</);
  });

  it('reads the reply as a follow-up and answers it with one cell in the same kernel', () => {
    expect(reply.termination).toBe('answered');
    // One cell, no reload: the breakdown ran on the tables the first question loaded.
    expect(reply.outputs).toHaveLength(1);
    expect(reply.outputs[0]).toContain(
      'Columns named in the instruction, found in orders.csv: revenue, region',
    );
    expect(reply.answer).toMatch(/By `region` in `orders\.csv`: `\w+` brings the largest total `revenue`/);
  });
});

describe('a follow-up that names nothing where nobody can reply (askMode reply)', () => {
  let thread: Thread;
  let result: TurnResult;

  beforeAll(async () => {
    ({ thread } = await threadOn({ 'orders.csv': path.join(examples, 'sales', 'orders.csv') }, 'reply'));
    result = await thread.ask('Why did sales fall?').result;
  });
  afterAll(async () => {
    await thread?.close();
  });

  it('asks once, then describes every table under an assumption it states, instead of asking forever', () => {
    // The question back, the description cell, the answer.
    expect(result.rounds).toBe(3);
    expect(result.termination.reason).toBe('answered');
    expect(result.answer).toContain('assumes it is about the data as a whole');
    expect(result.answer).toContain('- `orders.csv`: ');
  });
});

describe('a follow-up breakdown of a month on the student-loan enrolment table', () => {
  let thread: Thread;
  let reply: Reply;

  beforeAll(async () => {
    ({ thread } = await threadOn({
      'enrolled.csv': path.join(examples, 'student-loan', 'enrolled.csv'),
    }));
    reply = await ask(thread, 'month by school');
  });
  afterAll(async () => {
    await thread?.close();
  });

  it('does not add up months: it compares their mean per school', () => {
    expect(reply.answer).not.toMatch(/total `month`/);
    expect(reply.answer).toContain(
      '- By `school` in `enrolled.csv`: `month` looks like a calendar part (whole numbers named `month`), so it is compared by its mean per group, not added up: highest for `occ` (7.50), lowest for `ucb` (3.17).',
    );
  });
});

describe('which columns a breakdown adds up', () => {
  let thread: Thread;
  let earlier: string[];
  const replies = new Map<string, string>();
  // 40 rows; every column is numeric and varies, so each is a measure the focus step may break down.
  const rows = Array.from({ length: 40 }, (_, index) =>
    [
      ['North', 'South', 'East', 'West'][index % 4],
      (index * 37) % 500,
      ((index * 7) % 90) + 0.5,
      ((index * 13) % 100) / 100,
      2000 + (index % 12),
      (index % 12) + 1,
      ((index * 3) % 10) + 1,
      10 + ((index * 11) % 40) + 0.99,
      1000 + index,
      ((index * 5) % 9) + 1,
    ].join(','),
  );
  const csv = [
    'region,amount,growth_pct,conversion_rate,fiscal_year,tranMonth,satisfaction_score,unit_price,serial,units',
    ...rows,
  ].join('\n');

  beforeAll(async () => {
    ({ thread, outputs: earlier } = await threadOn({ 'measures.csv': `${csv}\n` }));
    for (const column of [
      'amount',
      'growth_pct',
      'conversion_rate',
      'fiscal_year',
      'tranMonth',
      'satisfaction_score',
      'unit_price',
      'serial',
      'units',
    ]) {
      const reply = await ask(thread, `${column} by region`);
      replies.set(column, reply.answer);
      earlier.push(...reply.outputs);
    }
  });
  afterAll(async () => {
    await thread?.close();
  });

  it('adds up amounts and units', () => {
    expect(replies.get('amount')).toMatch(/brings the largest total `amount` \(\d+, [\d.]+% of it\)/);
    expect(replies.get('units')).toMatch(/brings the largest total `units`/);
  });

  it.each([
    ['growth_pct', 'is a percentage, rate or ratio (its name says so, and its values lie between 0 and 100)'],
    [
      'conversion_rate',
      'is a percentage, rate or ratio (its name says so, and its values lie between 0 and 1)',
    ],
    ['fiscal_year', 'looks like a calendar part (whole numbers named `fiscal_year`)'],
    ['tranMonth', 'looks like a calendar part (whole numbers named `tranMonth`)'],
    ['satisfaction_score', 'is a level of each row (a score, rating, price, age or average)'],
    ['unit_price', 'is a level of each row (a score, rating, price, age or average)'],
    ['serial', 'looks like a serial number (whole numbers, each once, in an unbroken run)'],
  ])('compares %s by its mean per group, and says why', (column, why) => {
    const answer = replies.get(column) ?? '';
    expect(answer).not.toMatch(/largest total/);
    expect(answer).toContain(`\`${column}\` ${why}, so it is compared by its mean per group, not added up`);
  });

  it('quotes only numbers a cell printed', () => {
    for (const answer of replies.values()) expect(numbersMissingFrom(answer, earlier)).toEqual([]);
  });
});

describe('follow-ups on the messy files (latin-1 budget lines, a workbook with title rows)', () => {
  let thread: Thread;
  let earlier: string[];
  const replies = new Map<string, Reply>();
  const questions = [
    'Gasto total 2011 by GF',
    'break down by the columns of weird_head_padding.csv',
    'large.xlsx',
    // The workbook has a sheet called `data`: the first names every table, the second that sheet.
    'Describe the data',
    'Describe the `data` sheet',
  ];

  beforeAll(async () => {
    const messy = path.join(examples, 'messy');
    ({ thread, outputs: earlier } = await threadOn({
      'spanish_chars.csv': path.join(messy, 'spanish_chars.csv'),
      'weird_head_padding.csv': path.join(messy, 'weird_head_padding.csv'),
      'large.xlsx': path.join(messy, 'large.xlsx'),
    }));
    for (const question of questions) {
      const reply = await ask(thread, question);
      replies.set(question, reply);
      earlier.push(...reply.outputs);
    }
  });
  afterAll(async () => {
    await thread?.close();
  });

  it('says how many rows had no group and were left out, and what the share is of', () => {
    const answer = replies.get('Gasto total 2011 by GF')?.answer ?? '';
    expect(answer).toContain(
      '`Desarrollo Social` brings the largest total `Gasto total 2011` (1493503, 86.7% of the total 1723436 over the 2 rows that have a `GF`)',
    );
    expect(answer).toContain('112 of the 114 rows have no `GF` and are left out.');
  });

  it('describes a named table as the kernel loaded it: its rows, and the column names a follow-up can use', () => {
    const reply = replies.get('large.xlsx');
    const answer = reply?.answer ?? '';
    // The load step printed 29 rows for the Report sheet; the profile said 32.
    expect(answer).toContain(
      '- `large.xlsx [Report]`: 29 rows × 11 columns, as loaded in this conversation.',
    );
    expect(answer).not.toContain('32 rows');
    expect(answer).not.toContain('Unnamed:');
    expect(answer).toContain(
      '`large.xlsx [Report]`: a follow-up can name `SERIES`, `ALL BONDS ISSUED`, `ALL BONDS REDEEMED`',
    );
    expect(answer).toContain(
      '- `large.xlsx [Report]`: `column_2` has no name in the file (called by its place), so a question cannot name it.',
    );
    expect(answer).toContain(
      '- `large.xlsx [criteria]`: 7 rows × 5 columns, as loaded in this conversation.',
    );
    // Grounded in a cell of this turn, not in the profile.
    expect(reply?.outputs.join('\n')).toContain('large.xlsx [Report]: 29 rows × 11 columns');
  });

  it('names the columns of the padded CSV as the kernel has them, and each can be asked about', async () => {
    const answer = replies.get('break down by the columns of weird_head_padding.csv')?.answer ?? '';
    expect(answer).toContain(
      '- `weird_head_padding.csv`: 60 rows × 10 columns, as loaded in this conversation.',
    );
    expect(answer).toContain('`weird_head_padding.csv`: a follow-up can name `1985`, `1993`, `2000`');
    expect(answer).not.toContain('Unnamed:');
    const named = await ask(thread, '1993 by 2000');
    expect(named.answer).toContain('`1993` and `2000` (`weird_head_padding.csv`): r = ');
  });

  it('describes every loaded table for "Describe the data", not the sheet called `data` alone', () => {
    const answer = replies.get('Describe the data')?.answer ?? '';
    expect(answer).toContain('Every table, as the kernel of this conversation holds it:');
    for (const table of [
      'large.xlsx [Report]',
      'large.xlsx [data]',
      'large.xlsx [criteria]',
      'spanish_chars.csv',
      'weird_head_padding.csv',
    ])
      expect(answer).toContain(`- \`${table}\`: `);
  });

  it('describes the sheet called `data` when the question clearly names it', () => {
    const answer = replies.get('Describe the `data` sheet')?.answer ?? '';
    expect(answer).toContain('The question names `large.xlsx [data]`;');
    expect(answer).toContain('- `large.xlsx [data]`: ');
    expect(answer).not.toContain('`spanish_chars.csv`');
  });

  it('quotes only numbers a cell printed', () => {
    for (const { answer } of replies.values()) expect(numbersMissingFrom(answer, earlier)).toEqual([]);
  });
});
