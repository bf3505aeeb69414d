import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyze } from '../../src/agent/analyze.ts';
import { createOfflineAnalyst } from '../../src/agent/offline-analyst/index.ts';
import { readTrace } from '../../src/trace/reader.ts';
import type { ExecutionRecord } from '../../src/trace/schema.ts';
import { numbersMissingFrom } from './support/answer-numbers.ts';

/**
 * What a user review of the offline analyst's answers found, each on a small
 * workspace made for it: the real loop and the real Docker sandbox.
 */

const examples = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'workspace-examples');

let tempDir: string;

beforeAll(async () => {
  tempDir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-review-'));
});

afterAll(async () => {
  await rm(tempDir, { recursive: true, force: true });
});

interface Run {
  answer: string;
  executions: ExecutionRecord[];
}

async function analyzeFiles(name: string, files: Record<string, string | Uint8Array>): Promise<Run> {
  const workspaceDir = path.join(tempDir, name);
  await mkdir(workspaceDir);
  for (const [file, content] of Object.entries(files))
    await writeFile(path.join(workspaceDir, file), content);
  return analyzeWorkspace(name, workspaceDir);
}

async function analyzeWorkspace(name: string, workspaceDir: string): Promise<Run> {
  const outDir = path.join(tempDir, `${name}-run`);
  const result = await analyze({
    instruction: 'Describe these files.',
    workspaceDir,
    model: createOfflineAnalyst(),
    outDir,
  });
  expect(result.termination.reason).toBe('answered');
  const executions = (await readTrace(path.join(outDir, 'trace.jsonl'))).records.filter(
    (record): record is ExecutionRecord => record.type === 'execution',
  );
  expect(executions.filter((execution) => execution.result.status !== 'ok')).toEqual([]);
  const answer = result.answer ?? '';
  expect(
    numbersMissingFrom(
      answer,
      executions.map((execution) => execution.executeText),
    ),
  ).toEqual([]);
  return { answer, executions };
}

// A 4×4 PNG, named as a CSV.
const png = Buffer.from(
  '89504e470d0a1a0a0000000d4948445200000004000000040802000000269309290000001249444154789c63f8cfc000' +
    '4748ccff783800a29f0ff1543049090000000049454e44ae426082',
  'hex',
);

/** Bytes 1…255 from a fixed seed: no NUL, so only what they decode to says they are not text. */
function noise(length: number): Uint8Array {
  let state = 7;
  return Uint8Array.from({ length }, () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return 1 + Math.floor((state / 2147483648) * 255);
  });
}

describe('the offline analyst reads what the profile read', () => {
  it('never makes a table of a file whose bytes are not text, and says why it was not read', async () => {
    const { answer } = await analyzeFiles('not-text', {
      'picture.csv': png,
      'noise.csv': noise(3000),
      'visits.csv': 'city,visitors\nOslo,12\nLima,40\nPune,33\nKyiv,25\nNuuk,3\nBern,17\n',
    });
    expect(answer).not.toMatch(/tolerant reader loaded `(picture|noise)\.csv`/);
    expect(answer).toContain('Not read: `picture.csv` (Binary data, not text');
    expect(answer).toMatch(
      /`noise\.csv` was not read: its bytes are not text \([\d.]+% of its characters are control characters/,
    );
    expect(answer).toContain('`visits.csv`: 6 rows × 2 columns');
  });

  it('loads a header-only CSV as 0 rows, not as a misread file', async () => {
    const { answer } = await analyzeFiles('header-only', {
      'header_only.csv': 'a,b,c\n',
      'other.csv': 'x,y\n1,2\n3,4\n5,6\n7,9\n9,10\n',
    });
    expect(answer).toContain('`header_only.csv`: 0 rows × 3 columns (`a`, `b`, `c`).');
    expect(answer).not.toMatch(
      /header_only\.csv`?: not loaded|header_only\.csv`: the profile's reader failed/,
    );
    expect(answer).not.toContain('The tolerant reader loaded `header_only.csv`');
  });

  it('prints a whole number of the data without ".0"', async () => {
    const { answer } = await analyzeFiles('constant', {
      // A column of integers with a gap is read as floats: 42.0.
      'levels.csv': 'name,level\nx,42\ny,\nz,42\n',
      'visits.csv': 'city,visitors\nOslo,12\nLima,40\nPune,33\nKyiv,25\nNuuk,3\nBern,17\n',
    });
    expect(answer).toContain('`levels.csv`: `level` holds a single value (`42`) where present.');
    expect(answer).not.toContain('42.0');
  });
});

describe('the offline analyst says what its lists leave out', () => {
  it('says how many tables the list of loaded tables does not show', async () => {
    const { answer } = await analyzeWorkspace('student-loan', path.join(examples, 'student-loan'));
    expect(answer).toContain('28 tables loaded from 21 files.');
    expect(answer).toContain(
      '8 more tables are not listed here (`datalyst_inventory.csv` lists every file).',
    );
  });

  it('says "1 table repeats", not "1 table repeat"', async () => {
    const visits = 'city,visitors\nOslo,12\nLima,40\nPune,33\nKyiv,25\nNuuk,3\nBern,17\n';
    const { answer } = await analyzeFiles('one-duplicate', {
      'visits.csv': visits,
      'visits copy.csv': visits,
    });
    expect(answer).toContain(
      '1 table repeats another table exactly (the same data in another format) and is studied once.',
    );
  });
});

interface DailyRow {
  date: string;
  pieces: number;
}

/** Two years of sales, two rows on some days (events, so summed), more pieces later in the year. */
function piecesRows(): DailyRow[] {
  const rows: DailyRow[] = [];
  let state = 5;
  const next = (): number => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
  for (let day = Date.UTC(2022, 0, 1); day <= Date.UTC(2023, 11, 31); day += 86_400_000) {
    const date = new Date(day);
    const count = date.getUTCDate() % 3 === 0 ? 2 : 1;
    for (let row = 0; row < count; row += 1) {
      const pieces = 20 + date.getUTCMonth() * 3 + Math.floor(next() * 10);
      rows.push({ date: date.toISOString().slice(0, 10), pieces });
    }
  }
  return rows;
}

describe('the offline analyst on a series over time', () => {
  const rows = piecesRows();
  let run: Run;

  beforeAll(async () => {
    run = await analyzeFiles('pieces', {
      'pieces.csv': `date,Total Pieces\n${rows.map((row) => `${row.date},${row.pieces}`).join('\n')}\n`,
    });
  });

  it('does not double "total" when the measure is named "Total …"', () => {
    expect(run.answer).toContain('the sum of Total Pieces per week went from');
    expect(run.answer).not.toMatch(/total Total/i);
  });

  it('finds the pattern across the year by calendar month, not by the month a week ends in', () => {
    // Each calendar month's total, averaged over the two years.
    const totals = new Map<number, number>();
    for (const row of rows) {
      const month = Number(row.date.slice(5, 7));
      totals.set(month, (totals.get(month) ?? 0) + row.pieces / 2);
    }
    const names = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
    const sorted = [...totals].sort((a, b) => b[1] - a[1]);
    const said = ([month, value]: [number, number]): string =>
      `${names[month - 1]} (${Number.isInteger(value) ? value : value.toFixed(1)})`;
    const [highest, lowest] = [sorted[0], sorted.at(-1)];
    if (highest === undefined || lowest === undefined) throw new Error('no months');
    expect(run.answer).toContain(
      `By calendar month, the sum of Total Pieces per month, averaged over the years, is highest in ${said(highest)} and lowest in ${said(lowest)}.`,
    );
  });
});

interface PricedRow {
  date: string;
  month: number;
  unitPrice: number;
  units: number;
}

/** Two years of orders, one to three a day: a price per order that rises through the year, and units sold. */
function pricedRows(): PricedRow[] {
  const rows: PricedRow[] = [];
  let state = 11;
  const next = (): number => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
  for (let day = Date.UTC(2022, 0, 1); day <= Date.UTC(2023, 11, 31); day += 86_400_000) {
    const date = new Date(day);
    const count = 1 + (date.getUTCDate() % 3);
    for (let row = 0; row < count; row += 1) {
      const unitPrice = Math.round((20 + date.getUTCMonth() * 2 + next() * 5) * 100) / 100;
      const units = 1 + Math.floor(next() * 6);
      rows.push({ date: date.toISOString().slice(0, 10), month: date.getUTCMonth() + 1, unitPrice, units });
    }
  }
  return rows;
}

describe('the offline analyst on dated events of a measure that does not add up', () => {
  const rows = pricedRows();
  let prices: Run;
  let orders: Run;

  beforeAll(async () => {
    // Only a price to measure: its mean per week, never its total.
    prices = await analyzeFiles('prices', {
      'prices.csv': `date,unit_price\n${rows.map((row) => `${row.date},${row.unitPrice}`).join('\n')}\n`,
    });
    // A calendar part first, then units: the units are the measure over time, and they add up.
    orders = await analyzeFiles('orders-by-date', {
      'orders.csv': `date,month,units\n${rows.map((row) => `${row.date},${row.month},${row.units}`).join('\n')}\n`,
    });
  });

  it('does not add up a price per week: it gives the mean of each week and says why', () => {
    expect(prices.answer).not.toMatch(/(total|sum of) unit_price/i);
    expect(prices.answer).toMatch(
      /the mean unit_price per week went from [\d.]+ in the first quarter of that span to [\d.]+ in the last \([-\d.]+% change\)\. `unit_price` is a level of each row \(a score, rating, price, age or average\), so each week shows the mean of its rows, not their total\./,
    );
    expect(prices.answer).toMatch(/By weekday, the mean unit_price is highest on \w{3} \([\d.]+\)/);
  });

  it('gives the mean price of each calendar month, over the rows of both years', () => {
    const sums = new Map<number, { total: number; count: number }>();
    for (const row of rows) {
      const month = sums.get(row.month) ?? { total: 0, count: 0 };
      sums.set(row.month, { total: month.total + row.unitPrice, count: month.count + 1 });
    }
    const means = [...sums].map(([month, { total, count }]) => [month, total / count] as const);
    const sorted = [...means].sort((a, b) => b[1] - a[1]);
    const names = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
    const said = ([month, value]: readonly [number, number]): string =>
      `${names[month - 1]} (${value.toFixed(2)})`;
    const [highest, lowest] = [sorted[0], sorted.at(-1)];
    if (highest === undefined || lowest === undefined) throw new Error('no months');
    expect(prices.answer).toContain(
      `By calendar month, the mean unit_price is highest in ${said(highest)} and lowest in ${said(lowest)}.`,
    );
  });

  it('measures a quantity over time rather than a calendar part that comes first', () => {
    expect(orders.answer).toContain('the total units per week went from');
    expect(orders.answer).not.toMatch(/(total|mean|sum of) month per/);
  });
});
