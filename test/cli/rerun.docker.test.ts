import { createHash } from 'node:crypto';
import { copyFile, mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { traceRecordSchema, type TraceRecord } from '../../src/index.ts';
import { hashTree } from '../support/hash-tree.ts';
import { shippedSchemaValidator } from '../support/json-schema-validator.ts';
import {
  startFakeOpenAIServer,
  type FakeOpenAIServer,
  type RecordedRequest,
} from '../support/fake-openai-server.ts';
import { removeTemporaryDirs, temporaryDir } from './support/cli-harness.ts';

/**
 * `datalyst rerun` as a person runs it: a child process, the real Docker
 * sandbox, real run folders. Two recorded runs of the sales example (one by
 * the offline analyst, one by a scripted model whose code names columns, as a
 * model's does) are re-run on a second quarter of made-up orders whose totals
 * the test computes itself, on the same quarter with a column renamed, and
 * with `--rewrite-answer`.
 */

const projectRoot = path.resolve(import.meta.dirname, '../..');
const bin = path.join(projectRoot, 'bin', 'datalyst.js');
const salesDir = path.join(projectRoot, 'workspace-examples', 'sales');

const cleanEnv = {
  NO_COLOR: '1',
  DATALYST_MODEL: '',
  OPENAI_API_KEY: '',
  OPENAI_BASE_URL: '',
  DATALYST_BASE_URL: '',
  DATALYST_API_KEY: '',
};

function datalyst(args: readonly string[]) {
  return execa(process.execPath, [bin, ...args], {
    cwd: projectRoot,
    env: cleanEnv,
    reject: false,
    all: true,
  });
}

async function readTrace(runDir: string): Promise<TraceRecord[]> {
  return (await readFile(path.join(runDir, 'trace.jsonl'), 'utf8'))
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => traceRecordSchema.parse(JSON.parse(line)));
}

function runEndOf(records: readonly TraceRecord[]) {
  const end = records.findLast((record) => record.type === 'run-end');
  if (end?.type !== 'run-end') throw new Error('no run-end');
  return end;
}

const sha256 = async (file: string) =>
  createHash('sha256')
    .update(await readFile(file))
    .digest('hex');

// ---- The second quarter: made-up orders, with what they add up to computed here. ----

const products = [
  ['Rain Jacket', 'Apparel', 122.08],
  ['Fleece Hoodie', 'Apparel', 62.42],
  ['Water Filter', 'Outdoor', 37.61],
  ['Headlamp', 'Electronics', 31.59],
  ['Wool Socks', 'Apparel', 13.99],
  ['GPS Watch', 'Electronics', 249.7],
  ['Trail Backpack', 'Outdoor', 89.5],
  ['Camp Stove', 'Outdoor', 54.25],
] as const;
// 40 %, 30 %, 20 %, 10 %: the same order of shares as the first data, so the sentences stay true.
const regionCycle = ['North', 'North', 'North', 'North', 'East', 'East', 'East', 'South', 'South', 'West'];

interface Quarter {
  csv: string;
  orders: number;
  revenueByRegion: Map<string, number>;
  totalRevenue: number;
  meanUnits: number;
  missingDiscounts: number;
}

function secondQuarter(regionColumn = 'region', unitsColumn = 'units'): Quarter {
  let seed = 20240401;
  const random = () => {
    // A small linear congruential generator: the same orders on every run.
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  const header = `order_id,order_date,${regionColumn},channel,product,category,${unitsColumn},unit_price,discount_pct,revenue`;
  const lines = [header];
  const revenueByRegion = new Map<string, number>();
  let totalRevenue = 0;
  let totalUnits = 0;
  let missingDiscounts = 0;
  const orders = 240;
  const start = Date.UTC(2024, 3, 1);
  for (let index = 0; index < orders; index++) {
    const [product, category, listPrice] = products[Math.floor(random() * products.length)] ?? products[0];
    const region = regionCycle[index % regionCycle.length] ?? 'North';
    const channel = ['Online', 'Store', 'Partner'][Math.floor(random() * 3)] ?? 'Online';
    const units = 1 + Math.floor(random() * 9);
    const unitPrice = Math.round(listPrice * (0.95 + random() * 0.1) * 100) / 100;
    const missing = index % 40 === 7;
    const discount = missing ? 0 : ([0, 5, 10, 15][Math.floor(random() * 4)] ?? 0);
    const revenue = Math.round(units * unitPrice * (1 - discount / 100) * 100) / 100;
    // 2024-04-01 to 2024-06-30 (91 days), in order.
    const day = new Date(start + Math.floor((index * 90) / (orders - 1)) * 86_400_000)
      .toISOString()
      .slice(0, 10);
    lines.push(
      [
        `SO-2${String(index).padStart(4, '0')}`,
        day,
        region,
        channel,
        product,
        category,
        units,
        unitPrice.toFixed(2),
        missing ? '' : discount,
        revenue.toFixed(2),
      ].join(','),
    );
    revenueByRegion.set(region, (revenueByRegion.get(region) ?? 0) + revenue);
    totalRevenue += revenue;
    totalUnits += units;
    if (missing) missingDiscounts += 1;
  }
  return {
    csv: `${lines.join('\n')}\n`,
    orders,
    revenueByRegion,
    totalRevenue,
    meanUnits: totalUnits / orders,
    missingDiscounts,
  };
}

async function makeWorkspace(dir: string, quarter: Quarter): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (const name of await readdir(salesDir)) {
    if (name !== 'orders.csv') await copyFile(path.join(salesDir, name), path.join(dir, name));
  }
  await writeFile(path.join(dir, 'orders.csv'), quarter.csv);
}

/**
 * The sales example's own orders with West's revenue tripled and one more unit on every South order
 * (what a reviewer tried): West now leads the regions, Wednesday the weekdays, Partner the channels'
 * mean, while West still has the highest mean per row. Returns what the test checks against.
 */
async function makeShiftedWorkspace(dir: string): Promise<{ westMean: number; meanUnits: number }> {
  await mkdir(dir, { recursive: true });
  for (const name of await readdir(salesDir)) {
    if (name !== 'orders.csv') await copyFile(path.join(salesDir, name), path.join(dir, name));
  }
  const [header = '', ...rows] = (await readFile(path.join(salesDir, 'orders.csv'), 'utf8'))
    .trimEnd()
    .split('\n');
  const columns = header.split(',');
  const at = (name: string) => columns.indexOf(name);
  let westRevenue = 0;
  let westRows = 0;
  let units = 0;
  const shifted = rows.map((row) => {
    const cells = row.split(',');
    if (cells[at('region')] === 'West') {
      const revenue = Math.round(Number(cells[at('revenue')]) * 3 * 100) / 100;
      cells[at('revenue')] = revenue.toFixed(2);
      westRevenue += revenue;
      westRows += 1;
    }
    if (cells[at('region')] === 'South') cells[at('units')] = String(Number(cells[at('units')]) + 1);
    units += Number(cells[at('units')]);
    return cells.join(',');
  });
  await writeFile(path.join(dir, 'orders.csv'), `${[header, ...shifted].join('\n')}\n`);
  return { westMean: westRevenue / westRows, meanUnits: units / rows.length };
}

/** The line of an answer that starts so. */
function answerLine(answer: string, start: string): string {
  const line = answer.split('\n').find((candidate) => candidate.startsWith(start));
  if (line === undefined) throw new Error(`no line starting ${start} in:\n${answer}`);
  return line;
}

/** The line with each of its numbers marked stale. */
const allStale = (line: string) => line.replace(/\d+(?:\.\d+)?%?/g, (number) => `${number} \\[stale\\]`);

// ---- The scripted model: code that names its columns, and an answer from what the code printed. ----

const loadCode = [
  'import pandas as pd',
  "orders = pd.read_csv('orders.csv')",
  "print(f'orders: {len(orders)}')",
  "print(orders.groupby('region')['revenue'].sum().round(2).to_string())",
].join('\n');
const totalsCode = [
  'print(f\'total revenue: {orders["revenue"].sum():.2f}\')',
  'print(f\'mean units: {orders["units"].mean():.3f}\')',
].join('\n');

function lastUserText(request: RecordedRequest): string {
  return (request.body?.messages ?? []).map((message) => message.content).join('\n');
}

/** The model's answer, written from the numbers its cells printed (as a model would quote them). */
function answerFrom(request: RecordedRequest): string {
  const text = lastUserText(request);
  const pick = (pattern: RegExp) => pattern.exec(text)?.[1] ?? 'missing';
  const region = (name: string) => pick(new RegExp(`^${name}\\s+([\\d.]+)\\s*$`, 'm'));
  const meanUnits = Number(pick(/mean units: ([\d.]+)/)).toFixed(2);
  return [
    '<Answer>',
    '## Revenue by region',
    '',
    `- North: ${region('North')}`,
    `- East: ${region('East')}`,
    `- South: ${region('South')}`,
    `- West: ${region('West')}`,
    '',
    `In all, ${pick(/orders: (\d+)/)} orders brought ${pick(/total revenue: ([\d.]+)/)} of revenue; an order had ${meanUnits} units on average.`,
    '</Answer>',
  ].join('\n');
}

/** Numbers in the answer's bullet `- <label>: <number>` or sentence, read back. */
function statedNumber(answer: string, pattern: RegExp): number {
  const found = pattern.exec(answer)?.[1];
  if (found === undefined) throw new Error(`${String(pattern)} not in the answer:\n${answer}`);
  return Number(found.replaceAll(',', ''));
}

let root: string;
let offlineRun: string;
let modelRun: string;
let q2Dir: string;
let renamedDir: string;
let unitsRenamedDir: string;
let revenueRenamedDir: string;
let shiftedDir: string;
let shifted: { westMean: number; meanUnits: number };
let dataOnlyDir: string;
let quarter: Quarter;
let server: FakeOpenAIServer;
let before: Map<string, Map<string, string>>;
const watched = () => [
  salesDir,
  offlineRun,
  modelRun,
  q2Dir,
  renamedDir,
  unitsRenamedDir,
  revenueRenamedDir,
  shiftedDir,
  dataOnlyDir,
];

async function hashAll(): Promise<Map<string, Map<string, string>>> {
  return new Map(await Promise.all(watched().map(async (dir) => [dir, await hashTree(dir)] as const)));
}

beforeAll(async () => {
  root = await temporaryDir('datalyst-rerun-');
  offlineRun = path.join(root, 'offline-run');
  modelRun = path.join(root, 'model-run');
  q2Dir = path.join(root, 'sales-q2');
  renamedDir = path.join(root, 'sales-q2-renamed');
  unitsRenamedDir = path.join(root, 'sales-q2-units-renamed');
  quarter = secondQuarter();
  await makeWorkspace(q2Dir, quarter);
  await makeWorkspace(renamedDir, secondQuarter('area'));
  await makeWorkspace(unitsRenamedDir, secondQuarter('region', 'quantity'));
  revenueRenamedDir = path.join(root, 'sales-revenue-renamed');
  await mkdir(revenueRenamedDir);
  for (const name of await readdir(salesDir)) {
    const text = await readFile(path.join(salesDir, name));
    // The sales example's own orders, with its revenue column called sales.
    await writeFile(
      path.join(revenueRenamedDir, name),
      name === 'orders.csv' ? text.toString('utf8').replace(/,revenue\n/, ',sales\n') : text,
    );
  }
  shiftedDir = path.join(root, 'sales-shifted');
  shifted = await makeShiftedWorkspace(shiftedDir);
  // Only the files the recorded runs read as data: no README.md, no instruction.txt.
  dataOnlyDir = path.join(root, 'sales-q2-data-only');
  await mkdir(dataOnlyDir);
  await writeFile(path.join(dataOnlyDir, 'orders.csv'), quarter.csv);
  await copyFile(path.join(salesDir, 'sales_plan.xlsx'), path.join(dataOnlyDir, 'sales_plan.xlsx'));
  server = await startFakeOpenAIServer({
    models: ['scripted'],
    script: [
      { type: 'text', text: `<Analyze>Load the orders.</Analyze>\n<Code>\n${loadCode}\n</Code>` },
      { type: 'text', text: `<Code>\n${totalsCode}\n</Code>` },
      (request) => ({ type: 'text', text: answerFrom(request) }),
    ],
  });
  const instruction = (await readFile(path.join(salesDir, 'instruction.txt'), 'utf8')).trim();
  const offline = await datalyst([
    'analyze',
    salesDir,
    instruction,
    '--offline',
    '--out',
    offlineRun,
    '--format',
    'json',
  ]);
  expect(offline.exitCode, offline.all).toBe(0);
  const model = await datalyst([
    'analyze',
    salesDir,
    'What revenue did each region bring?',
    '--model',
    'scripted',
    '--base-url',
    server.baseUrl,
    '--out',
    modelRun,
    '--format',
    'json',
  ]);
  expect(model.exitCode, model.all).toBe(0);
  before = await hashAll();
}, 240_000);

afterAll(async () => {
  await server?.close();
  await removeTemporaryDirs();
});

describe('datalyst rerun', () => {
  it('re-runs a model’s recorded cells on a second quarter: the answer’s totals are the new quarter’s', async () => {
    const out = path.join(root, 'model-q2');
    const run = await datalyst(['rerun', modelRun, q2Dir, '-o', out]);
    expect(run.exitCode, run.all).toBe(0);
    expect(run.all).toMatch(/Numbers of the earlier answer: \d+ updated, \d+ unchanged, 0 stale/);
    // No model was asked: not "Answered in 0 rounds".
    expect(run.all).toMatch(
      /✓ Re-ran the recorded cells; the earlier answer is carried over to the new outputs · /,
    );
    expect(run.all).not.toContain('Answered in 0 rounds');
    const records = await readTrace(out);
    const end = runEndOf(records);
    expect(end.termination.reason).toBe('answered');
    const answer = end.answer ?? '';
    for (const region of ['North', 'East', 'South', 'West']) {
      const expected = quarter.revenueByRegion.get(region) ?? Number.NaN;
      expect(statedNumber(answer, new RegExp(`- ${region}: ([\\d.,]+)`))).toBeCloseTo(expected, 1);
    }
    expect(statedNumber(answer, /In all, (\d+) orders/)).toBe(quarter.orders);
    expect(statedNumber(answer, /brought ([\d.,]+) of revenue/)).toBeCloseTo(quarter.totalRevenue, 1);
    expect(Math.abs(statedNumber(answer, /had ([\d.]+) units/) - quarter.meanUnits)).toBeLessThanOrEqual(
      0.005,
    );
    expect(answer).not.toContain('stale');

    // The new run's own provenance: a re-run of the earlier run (id, folder, trace hash), new input hashes.
    const start = records[0];
    if (start?.type !== 'run-start') throw new Error('no run-start');
    const earlier = (await readTrace(modelRun))[0];
    if (earlier?.type !== 'run-start') throw new Error('no run-start');
    expect(start.rerunOf).toEqual({
      runId: earlier.runId,
      runDir: modelRun,
      traceSha256: await sha256(path.join(modelRun, 'trace.jsonl')),
      workspacePath: salesDir,
    });
    expect(start.runId).not.toBe(earlier.runId);
    expect(start.workspace.path).toBe(q2Dir);
    expect(start.workspace.files.find((file) => file.path === 'orders.csv')?.sha256).toBe(
      await sha256(path.join(q2Dir, 'orders.csv')),
    );
    // The report as `analyze` writes it.
    for (const file of ['report.html', 'report.md', 'analysis.ipynb', 'trace.json'])
      expect((await stat(path.join(out, file))).isFile()).toBe(true);
    const html = await readFile(path.join(out, 'report.html'), 'utf8');
    expect(html).toContain('Re-run');
    expect(html).toContain(await sha256(path.join(q2Dir, 'orders.csv')));
    expect(html).toContain('<dt>Re-run of</dt>');
    expect(html).toContain(
      `run ${earlier.runId} (folder model-run), trace SHA-256 ${start.rerunOf?.traceSha256}`,
    );
  }, 120_000);

  it('re-runs the offline analyst’s run of the sales example: rows, shares, missing values and dates follow the new data', async () => {
    const out = path.join(root, 'offline-q2');
    const run = await datalyst(['rerun', offlineRun, q2Dir, '-o', out, '--format', 'html,md']);
    expect(run.exitCode, run.all).toBe(0);
    const answer = runEndOf(await readTrace(out)).answer ?? '';
    expect(answer).toContain(`\`orders.csv\`: ${quarter.orders} rows × 10 columns`);
    // 96, 72 and 48 of 240 orders.
    expect(answer).toContain('the top ones are `North` 40.0%, `East` 30.0%, `South` 20.0%.');
    const share = ((quarter.missingDiscounts / quarter.orders) * 100).toFixed(1);
    expect(answer).toContain(
      `\`discount_pct\` misses ${quarter.missingDiscounts} of ${quarter.orders} (${share}%)`,
    );
    expect(answer).toContain('`order_date` (`orders.csv`) spans 2024-04-01 to 2024-06-30');
    // Whatever could not be placed is marked, in the answer and in the CLI's summary alike.
    // (The note above the answer names the mark once.)
    const marks = answer.match(/\\\[stale\\\]/g)?.length ?? 0;
    const staleInAnswer = marks > 0 ? marks - 1 : 0;
    expect(run.all).toContain(`${staleInAnswer} stale`);
    const markdown = await readFile(path.join(out, 'report.md'), 'utf8');
    expect(markdown).toContain('Re-run');
    expect(markdown).toMatch(
      /^- \*\*Re-run of:\*\* run .* \(folder offline-run\), trace SHA-256 `[0-9a-f]{64}`/m,
    );
  }, 120_000);

  it('marks stale the numbers of a sentence whose words the new data changed (a ranking with a new leader), and updates those whose sentence reads the same', async () => {
    const out = path.join(root, 'offline-shifted');
    const run = await datalyst(['rerun', offlineRun, shiftedDir, '-o', out, '--json', '--format', 'md']);
    expect(run.exitCode, run.all).toBe(0);
    const before = runEndOf(await readTrace(offlineRun)).answer ?? '';
    const after = runEndOf(await readTrace(out)).answer ?? '';
    const newOutputs = (await readTrace(out))
      .filter((record) => record.type === 'execution')
      .map((record) => record.executeText)
      .join('\n');
    // The new outputs rank other days, months and channels first ...
    const weekday = '- By weekday in `orders.csv`, the total revenue per day is highest on ';
    expect(answerLine(before, weekday)).toContain('highest on Thu');
    expect(answerLine(newOutputs, weekday)).not.toContain('highest on Thu');
    const month = '- By calendar month in `orders.csv`, the total revenue per month is highest in ';
    expect(answerLine(newOutputs, month).slice(month.length, month.length + 3)).not.toBe(
      answerLine(before, month).slice(month.length, month.length + 3),
    );
    const channel = '- By `channel` in `orders.csv`: ';
    expect(answerLine(newOutputs, channel)).not.toContain('highest for `Online`');
    // ... so the answer's sentences that rank them keep their old numbers, marked stale, not the new
    // Thursday, April or Online values that a raw table row still prints.
    expect(answerLine(after, weekday)).toBe(allStale(answerLine(before, weekday)));
    expect(answerLine(after, month)).toBe(allStale(answerLine(before, month)));
    expect(answerLine(after, channel)).toMatch(
      /the mean per row is highest for `Online` \([\d.]+ \\\[stale\\\]\) and lowest for `Store` \([\d.]+ \\\[stale\\\]\)\.$/,
    );
    // The region sentence's first clause, "`North` brings the largest total …", no longer holds, and its second,
    // "the mean per row is highest for `West` (#)", is said after it: all its numbers are stale, though West
    // still has the highest mean per row (printed after "`West` brings …": other words).
    const region = '- By `region` in `orders.csv`: ';
    expect(answerLine(after, region)).toContain('`North` brings the largest');
    expect(answerLine(after, region)).toBe(allStale(answerLine(before, region)));
    expect(statedNumber(answerLine(newOutputs, region), /highest for `West` \(([\d.]+)\)/)).toBeCloseTo(
      shifted.westMean,
      0,
    );
    // A sentence that still reads the same takes the new number.
    const units = answerLine(after, '- `units` (`orders.csv`) ranges from ');
    expect(Math.abs(statedNumber(units, /mean ([\d.]+)\)/) - shifted.meanUnits)).toBeLessThanOrEqual(0.005);
    // --json says the same, anchored to the sentence the answer quotes, not to the raw "Mon #, …" row.
    const summary = run.stdout
      .trimEnd()
      .split('\n')
      .map(
        (line) =>
          JSON.parse(line) as {
            type: string;
            numbers?: { oldText: string; status: string; label: string }[];
          },
      )
      .find((line) => line.type === 'rerun-summary');
    const thursday = /highest on Thu \(([\d.]+)\)/.exec(before)?.[1];
    expect(summary?.numbers?.find((number) => number.oldText === thursday)).toMatchObject({
      status: 'stale',
      label: expect.stringContaining('is highest on Thu (#) and lowest on Mon (#)') as unknown,
    });
  }, 120_000);

  it('marks stale the weekday and month sentences about revenue when revenue is renamed sales (never the units lines printed in their place)', async () => {
    const out = path.join(root, 'offline-revenue-renamed');
    const run = await datalyst(['rerun', offlineRun, revenueRenamedDir, '-o', out, '--format', 'md']);
    // `revenue`, which the answer names, is gone: the run says so (rerun-cell-failed) ...
    expect(run.exitCode, run.all).toBe(3);
    expect(run.all).toContain('The answer names `revenue`, which the new outputs never print');
    const before = runEndOf(await readTrace(offlineRun)).answer ?? '';
    const after = runEndOf(await readTrace(out)).answer ?? '';
    // ... and the sentences about revenue per day and month keep their old numbers, marked, instead of
    // the units per day and month that the new outputs print on lines of the same shape.
    for (const start of [
      '- By weekday in `orders.csv`, the total revenue per day is highest on ',
      '- By calendar month in `orders.csv`, the total revenue per month is highest in ',
    ])
      expect(answerLine(after, start)).toBe(allStale(answerLine(before, start)));
  }, 120_000);

  it('re-runs on a workspace without the text files the recorded run did not read as data (README.md, instruction.txt), and says so', async () => {
    const out = path.join(root, 'offline-data-only');
    const run = await datalyst(['rerun', offlineRun, dataOnlyDir, '-o', out, '--format', 'md']);
    expect(run.exitCode, run.all).toBe(0);
    expect(run.all).toContain(
      'README.md, instruction.txt are not in the new workspace; the recorded run did not read them as data',
    );
    expect(runEndOf(await readTrace(out)).termination.reason).toBe('answered');
  }, 120_000);

  it('fails the cell that reads a renamed column, shows its error and ends rerun-cell-failed (exit 3)', async () => {
    const out = path.join(root, 'model-renamed');
    const run = await datalyst(['rerun', modelRun, renamedDir, '-o', out]);
    expect(run.exitCode, run.all).toBe(3);
    expect(run.all).toMatch(/E1 failed on the new data: KeyError: .*region/);
    const records = await readTrace(out);
    const end = runEndOf(records);
    expect(end.termination.reason).toBe('rerun-cell-failed');
    expect(end.termination.detail).toMatch(
      /^E1 failed on the new data \(KeyError: .*region.*\).*Not run after it: E2\./,
    );
    const executions = records.filter((record) => record.type === 'execution');
    expect(executions.map((execution) => [execution.outputId, execution.result.status])).toEqual([
      ['E1', 'error'],
    ]);
    // The numbers E1 and E2 printed could not be placed: stale, with the old values kept.
    expect(end.answer).toContain('\\[stale\\]');
    const html = await readFile(path.join(out, 'report.html'), 'utf8');
    expect(html).toContain('KeyError');
    // The stale marks stand out in the HTML (styled text, not markdown brackets).
    expect(html).toContain('<mark class="rerun-mark rerun-stale">[stale]</mark>');
    expect(html).toContain('a recorded cell failed on the new data');
  }, 120_000);

  it('does not carry the offline answer over as a success when a column it names was renamed (units → quantity) and no cell failed', async () => {
    const out = path.join(root, 'offline-units-renamed');
    const run = await datalyst(['rerun', offlineRun, unitsRenamedDir, '-o', out, '--format', 'md']);
    // The offline analyst finds its columns by itself: every cell ran, none raised an error.
    expect(run.exitCode, run.all).toBe(3);
    expect(run.all).toContain(
      "The answer names `units`, which the new outputs never print (E4 printed it in the recorded run): the data's columns changed.",
    );
    expect(run.all).toMatch(/E4 failed on the new data: no error, but it no longer prints `units`/);
    // Not "✓ …, the earlier answer is carried over": the closing line says it stopped (cells' own lines are "  ✓ E1 ok").
    expect(run.all).not.toMatch(/^✓ /m);
    expect(run.all).toMatch(/^✗ Stopped \(rerun-cell-failed\)/m);
    const records = await readTrace(out);
    const end = runEndOf(records);
    expect(end.termination.reason).toBe('rerun-cell-failed');
    expect(end.termination.detail).toMatch(/the data's columns changed.*Every recorded cell ran\.$/);
    expect(
      records
        .filter((record) => record.type === 'execution')
        .every((record) => record.result.status === 'ok'),
    ).toBe(true);
    // The answer says so above itself, and still marks what it could not place.
    expect(end.answer).toContain('> **The answer names `units`, which the new outputs never print');
    expect(await readFile(path.join(out, 'report.md'), 'utf8')).toMatch(/^# Failed: /);
  }, 120_000);

  it('--rewrite-answer asks the model once with the new outputs and takes its answer', async () => {
    const rewriter = await startFakeOpenAIServer({
      models: ['rewriter'],
      script: [{ type: 'text', text: '<Answer>The second quarter had 240 orders.</Answer>' }],
    });
    try {
      const out = path.join(root, 'model-rewritten');
      const run = await datalyst([
        'rerun',
        modelRun,
        q2Dir,
        '-o',
        out,
        '--rewrite-answer',
        '--model',
        'rewriter',
        '--base-url',
        rewriter.baseUrl,
      ]);
      expect(run.exitCode, run.all).toBe(0);
      expect(rewriter.completionRequests).toHaveLength(1);
      const sent = lastUserText(rewriter.completionRequests[0] as RecordedRequest);
      expect(sent).toContain('What revenue did each region bring?');
      expect(sent).toContain('## Revenue by region'); // the earlier answer
      expect(sent).toContain(`orders: ${quarter.orders}`); // the new outputs
      expect(sent).toContain(`total revenue: ${quarter.totalRevenue.toFixed(2)}`);
      expect(sent).not.toContain('orders: 1200');
      const end = runEndOf(await readTrace(out));
      expect(end.termination.reason).toBe('answered');
      expect(end.answer).toContain('The second quarter had 240 orders.');
      expect(end.answer).toContain('rewritten by the model `rewriter`');
      expect(run.all).toContain('Numbers in the answer: 1 of 1 found in the execution outputs.');
    } finally {
      await rewriter.close();
    }
  }, 120_000);

  it('--rewrite-answer whose model keeps failing ends model-unavailable (exit 5) and keeps the carried-over answer', async () => {
    // Every request fails with a 503 that asks for no wait: the client's retries run out at once.
    const failing = await startFakeOpenAIServer({
      models: ['rewriter'],
      script: [],
      whenExhausted: { type: 'error', status: 503, retryAfter: '0', message: 'overloaded' },
    });
    try {
      const out = path.join(root, 'model-rewrite-unavailable');
      const run = await datalyst([
        'rerun',
        modelRun,
        q2Dir,
        '-o',
        out,
        '--rewrite-answer',
        '--model',
        'rewriter',
        '--base-url',
        failing.baseUrl,
      ]);
      expect(run.exitCode, run.all).toBe(5);
      expect(run.all).toContain('MODEL_UNAVAILABLE');
      // The terminal shows the carried-over answer, and its end line says so (not "without an answer").
      expect(run.all).not.toContain('Stopped without an answer');
      expect(run.all).toContain(
        "The model's rewrite of the answer failed: the answer shown is the earlier one",
      );
      // The model was asked (and retried), and failed every time.
      expect(failing.completionRequests.length).toBeGreaterThan(1);
      const records = await readTrace(out);
      const end = runEndOf(records);
      expect(end.termination.reason).toBe('model-unavailable');
      expect(end.termination.detail).toContain('overloaded');
      // The cells ran, and the answer is the carried-over one: the new quarter's totals, not a rewrite.
      const executions = records.filter((record) => record.type === 'execution');
      expect(executions.map((execution) => execution.result.status)).toEqual(['ok', 'ok']);
      const answer = end.answer ?? '';
      expect(answer).toContain('with no model');
      expect(answer).not.toContain('rewritten by the model');
      expect(statedNumber(answer, /In all, (\d+) orders/)).toBe(quarter.orders);
      expect(statedNumber(answer, /brought ([\d.,]+) of revenue/)).toBeCloseTo(quarter.totalRevenue, 1);
      expect(records.some((record) => record.type === 'notice' && record.kind === 'retry')).toBe(true);
      expect(records.some((record) => record.type === 'model-turn')).toBe(false);
      // The report is written, and says how the run ended.
      const html = await readFile(path.join(out, 'report.html'), 'utf8');
      expect(html).toContain('model-unavailable');
      expect(html).toContain(String(quarter.orders));
    } finally {
      await failing.close();
    }
  }, 120_000);

  it('--json writes only JSON lines on stdout, as the shipped schema describes them, with a rerun-summary before report-end', async () => {
    const out = path.join(root, 'model-q2-json');
    const run = await datalyst(['rerun', modelRun, q2Dir, '-o', out, '--json', '--format', 'html']);
    expect(run.exitCode, run.all).toBe(0);
    const lines = run.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string } & Record<string, unknown>);
    const validate = shippedSchemaValidator('json-lines.schema.json');
    for (const line of lines) {
      expect(validate(line), JSON.stringify(line).slice(0, 200)).toEqual([]);
      expect(line).toMatchObject({ schemaVersion: 1 });
    }
    const types = lines.map((line) => line.type);
    expect(types[0]).toBe('workspace-check');
    expect(types).toContain('run-start');
    expect(types.filter((type) => type === 'execution-end')).toHaveLength(2);
    expect(types.slice(-3)).toEqual(['run-end', 'rerun-summary', 'report-end']);
    const earlier = (await readTrace(modelRun))[0];
    if (earlier?.type !== 'run-start') throw new Error('no run-start');
    const summary = lines.at(-2);
    expect(summary).toMatchObject({
      rerunOf: {
        runId: earlier.runId,
        runDir: modelRun,
        traceSha256: await sha256(path.join(modelRun, 'trace.jsonl')),
      },
      cells: [
        { outputId: 'E1', status: 'ok', recordedStatus: 'ok', detail: null },
        { outputId: 'E2', status: 'ok', recordedStatus: 'ok', detail: null },
      ],
      failedCell: null,
      answerSource: 'carried-over',
    });
    const numbers = (summary?.numbers ?? []) as { status: string; newText: string }[];
    expect(numbers.length).toBeGreaterThan(0);
    expect(numbers.filter((number) => number.status === 'stale')).toEqual([]);
    expect(numbers.map((number) => number.newText)).toContain(String(quarter.orders));
    expect(lines.at(-1)).toMatchObject({ type: 'report-end', outDir: out });
    // The people-facing lines go to stderr, off the JSON stream.
    expect(run.stderr).toContain('Report:');
  }, 120_000);

  it('refuses a workspace that lacks a file of the earlier one (naming it), a new run inside the earlier one, and --rewrite-answer without a model', async () => {
    const partial = path.join(root, 'sales-q2-partial');
    await mkdir(partial);
    await writeFile(path.join(partial, 'orders.csv'), quarter.csv);
    const out = path.join(root, 'model-partial');
    const run = await datalyst(['rerun', modelRun, partial, '-o', out]);
    expect(run.exitCode, run.all).toBe(2);
    expect(run.all).toContain('WORKSPACE_INVALID');
    expect(run.all).toMatch(/has no .*sales_plan\.xlsx/);
    await expect(stat(out)).rejects.toThrow(); // no run folder left behind

    const inside = await datalyst(['rerun', modelRun, q2Dir, '-o', path.join(modelRun, 'again')]);
    expect(inside.exitCode, inside.all).toBe(2);
    expect(inside.all).toContain("is the earlier run's folder or inside it");

    const noModel = await datalyst(['rerun', modelRun, q2Dir, '--rewrite-answer', '-o', out]);
    expect(noModel.exitCode, noModel.all).toBe(2);
    expect(noModel.all).toContain('--rewrite-answer needs a language model');
  }, 60_000);

  it('leaves the earlier runs and every input file byte-identical', async () => {
    expect(await hashAll()).toEqual(before);
  });
});
