/**
 * Makes the generated example workspaces in `workspace-examples/` (sales,
 * time-series) from a fixed seed, and copies the real ones (student-loan,
 * messy) from `../shared/data` when that folder is present. The outputs are
 * committed; run this again only to change them:
 *
 *     npx tsx scripts/make-example-workspaces.ts
 *
 * Same script, same files: the random numbers come from a seeded generator,
 * CSV numbers are written with fixed decimals, and the xlsx writer gets no
 * clock-dependent input (the test `example-workspaces.test.ts` checks that
 * a second run reproduces the committed bytes).
 */
import { chmod, copyFile, mkdir, readdir, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import writeExcelFile from 'write-excel-file/node';
import type { SheetData } from 'write-excel-file/node';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const examplesDir = path.join(repoRoot, 'workspace-examples');
const sharedDataDir = path.resolve(repoRoot, '..', 'shared', 'data');

/** mulberry32: a small, well-known 32-bit seeded generator; enough for demo data. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function normal(random: () => number): number {
  // Box-Muller; 1 - u keeps log() away from 0.
  const u = 1 - random();
  const v = random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

function pick<T>(random: () => number, items: readonly T[], weights: readonly number[]): T {
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  let threshold = random() * total;
  for (let index = 0; index < items.length; index += 1) {
    threshold -= weights[index] ?? 0;
    if (threshold <= 0) return items[index] as T;
  }
  return items[items.length - 1] as T;
}

function isoDate(date: Date): string {
  return date.toISOString().slice(0, 10);
}

function addDays(start: Date, days: number): Date {
  return new Date(start.getTime() + days * 86_400_000);
}

/**
 * Zip writers stamp every entry with the current time, so two runs give two
 * different .xlsx files. Rewrite every DOS timestamp (local headers and the
 * central directory) to 1980-01-01 00:00 so that the workbook is byte-stable.
 */
function clearZipTimestamps(zip: Buffer): Buffer {
  const fixedTime = 0;
  const fixedDate = (0 << 9) | (1 << 5) | 1;
  const endOffset = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (endOffset < 0) throw new Error('not a zip file: no end of central directory');
  const entryCount = zip.readUInt16LE(endOffset + 10);
  let offset = zip.readUInt32LE(endOffset + 16);
  for (let entry = 0; entry < entryCount; entry += 1) {
    if (zip.readUInt32LE(offset) !== 0x02014b50) throw new Error('bad central directory entry');
    zip.writeUInt16LE(fixedTime, offset + 12);
    zip.writeUInt16LE(fixedDate, offset + 14);
    const localOffset = zip.readUInt32LE(offset + 42);
    if (zip.readUInt32LE(localOffset) !== 0x04034b50) throw new Error('bad local file header');
    zip.writeUInt16LE(fixedTime, localOffset + 10);
    zip.writeUInt16LE(fixedDate, localOffset + 12);
    offset +=
      46 + zip.readUInt16LE(offset + 28) + zip.readUInt16LE(offset + 30) + zip.readUInt16LE(offset + 32);
  }
  return zip;
}

function csvField(value: string | number | null): string {
  if (value === null) return '';
  const text = String(value);
  return /[",\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

function toCsv(
  header: readonly string[],
  rows: ReadonlyArray<ReadonlyArray<string | number | null>>,
): string {
  return [header, ...rows].map((row) => row.map(csvField).join(',')).join('\n') + '\n';
}

const regions = ['North', 'South', 'East', 'West'] as const;
const channels = ['Online', 'Store', 'Partner'] as const;
const products = [
  { product: 'Trail Backpack', category: 'Outdoor', price: 89, launch: '2021-03-01' },
  { product: 'Camping Stove', category: 'Outdoor', price: 54, launch: '2022-05-15' },
  { product: 'Rain Jacket', category: 'Apparel', price: 120, launch: '2020-09-01' },
  { product: 'Wool Socks', category: 'Apparel', price: 14, launch: '2019-11-01' },
  { product: 'Headlamp', category: 'Electronics', price: 32, launch: '2023-02-01' },
  { product: 'GPS Watch', category: 'Electronics', price: 249, launch: '2023-08-20' },
  { product: 'Water Filter', category: 'Outdoor', price: 39, launch: '2022-01-10' },
  { product: 'Fleece Hoodie', category: 'Apparel', price: 65, launch: '2021-10-01' },
] as const;

async function makeSales(dir: string): Promise<void> {
  const random = seededRandom(20240601);
  const start = new Date(Date.UTC(2024, 0, 1));
  const header = [
    'order_id',
    'order_date',
    'region',
    'channel',
    'product',
    'category',
    'units',
    'unit_price',
    'discount_pct',
    'revenue',
  ];
  const rows: Array<Array<string | number | null>> = [];
  const returns: SheetData = [['order_id', 'return_date', 'reason']];
  for (let index = 0; index < 1200; index += 1) {
    const day = Math.floor(random() * 366);
    const region = pick(random, regions, [0.3, 0.2, 0.3, 0.2]);
    const channel = pick(random, channels, [0.5, 0.35, 0.15]);
    const item = pick(random, products, [3, 2, 2, 4, 3, 1, 2, 3]);
    // Online orders get larger discounts, and larger discounts sell more units.
    const discountBase = channel === 'Online' ? 12 : channel === 'Partner' ? 8 : 4;
    const discount = Math.max(0, Math.round(discountBase + normal(random) * 4));
    const regionBoost = region === 'West' ? 1.5 : region === 'North' ? 1.2 : 1;
    const units = Math.max(
      1,
      Math.round((1.5 + discount * 0.18) * regionBoost + Math.abs(normal(random)) * 2),
    );
    const unitPrice = Math.round(item.price * (0.95 + random() * 0.1) * 100) / 100;
    const revenue = Math.round(units * unitPrice * (1 - discount / 100) * 100) / 100;
    // About 4% of discounts were not recorded.
    const discountCell = random() < 0.04 ? null : discount;
    const orderId = `SO-${String(10001 + index)}`;
    rows.push([
      orderId,
      isoDate(addDays(start, day)),
      region,
      channel,
      item.product,
      item.category,
      units,
      unitPrice.toFixed(2),
      discountCell,
      revenue.toFixed(2),
    ]);
    if (random() < 0.05) {
      const reason = pick(random, ['Damaged', 'Wrong size', 'Changed mind', 'Late delivery'], [2, 3, 4, 1]);
      const returnDate = addDays(start, day + 3 + Math.floor(random() * 20));
      returns.push([orderId, { value: returnDate, type: Date, format: 'yyyy-mm-dd' }, reason]);
    }
  }
  rows.sort(
    (left, right) =>
      String(left[1]).localeCompare(String(right[1])) || String(left[0]).localeCompare(String(right[0])),
  );
  await writeFile(path.join(dir, 'orders.csv'), toCsv(header, rows));

  const targets: SheetData = [['region', 'quarter', 'revenue_target', 'store_count']];
  for (const region of regions) {
    for (let quarter = 1; quarter <= 4; quarter += 1) {
      const base = region === 'West' || region === 'North' ? 26000 : 19000;
      targets.push([
        region,
        `2024-Q${quarter}`,
        Math.round(base * (0.9 + random() * 0.3)),
        3 + Math.floor(random() * 5),
      ]);
    }
  }
  const catalog: SheetData = [['product', 'category', 'list_price', 'launch_date', 'supplier']];
  for (const item of products) {
    const launchDate = {
      value: new Date(`${item.launch}T00:00:00Z`),
      type: Date,
      format: 'yyyy-mm-dd',
    } as const;
    catalog.push([
      item.product,
      item.category,
      item.price,
      launchDate,
      pick(random, ['Alpen AG', 'Northwind', 'Kestrel Ltd'], [1, 1, 1]),
    ]);
  }
  const buffer = await writeExcelFile([
    { data: targets, sheet: 'Targets' },
    { data: catalog, sheet: 'Products' },
    { data: returns, sheet: 'Returns' },
  ]).toBuffer();
  await writeFile(path.join(dir, 'sales_plan.xlsx'), clearZipTimestamps(Buffer.from(buffer)));
}

async function makeTimeSeries(dir: string): Promise<void> {
  const random = seededRandom(7301);
  const start = new Date(Date.UTC(2022, 0, 1));
  const header = ['date', 'visits', 'signups', 'temperature_c', 'campaign'];
  const rows: Array<Array<string | number | null>> = [];
  const days = 730;
  for (let day = 0; day < days; day += 1) {
    const date = addDays(start, day);
    const weekday = date.getUTCDay();
    const weekly = weekday === 0 || weekday === 6 ? -380 : 120;
    const yearly = 600 * Math.sin((2 * Math.PI * (day - 80)) / 365);
    const trend = 2500 + day * 2.2;
    let visits = trend + weekly + yearly + normal(random) * 140;
    const campaign = day % 91 < 14 ? 'spring-push' : 'none';
    if (campaign !== 'none') visits *= 1.12;
    // Two anomalies a good analysis should find: a spike (a viral post) and an outage.
    if (isoDate(date) === '2023-03-14') visits *= 3.1;
    if (isoDate(date) === '2022-10-02') visits *= 0.08;
    const signups = Math.max(0, Math.round(visits * (0.021 + random() * 0.006)));
    const temperature = 11 + 12 * Math.sin((2 * Math.PI * (day - 105)) / 365) + normal(random) * 2.5;
    // A sensor gap: temperature missing for eight days.
    const temperatureCell = day >= 400 && day < 408 ? null : temperature.toFixed(1);
    rows.push([isoDate(date), Math.round(visits), signups, temperatureCell, campaign]);
  }
  await writeFile(path.join(dir, 'daily_visits.csv'), toCsv(header, rows));
}

async function copyFolder(from: string, to: string): Promise<boolean> {
  if (!existsSync(from)) return false;
  for (const name of (await readdir(from)).sort()) {
    await copyFile(path.join(from, name), path.join(to, name));
    // The shared material is read-only; the copies are ordinary project files.
    await chmod(path.join(to, name), 0o644);
  }
  return true;
}

/**
 * Writes the generated workspaces under `outDir`; with `copyRealData`, also
 * copies the real ones from the shared material. Exported for the test that
 * checks the committed files are what this script makes.
 */
export async function makeExampleWorkspaces(outDir: string, copyRealData: boolean): Promise<void> {
  const salesDir = path.join(outDir, 'sales');
  const timeSeriesDir = path.join(outDir, 'time-series');
  await mkdir(salesDir, { recursive: true });
  await mkdir(timeSeriesDir, { recursive: true });
  await makeSales(salesDir);
  await makeTimeSeries(timeSeriesDir);
  if (!copyRealData) return;
  // The real files are copied only where the shared test material is present;
  // their committed copies are what the examples use.
  for (const [from, to] of [
    [path.join(sharedDataDir, 'deepanalyze-student-loan', 'data'), path.join(outDir, 'student-loan')],
    [path.join(sharedDataDir, 'messy'), path.join(outDir, 'messy')],
  ] as const) {
    await mkdir(to, { recursive: true });
    const copied = await copyFolder(from, to);
    console.log(copied ? `copied ${from}` : `skipped ${from} (not present)`);
  }
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await makeExampleWorkspaces(examplesDir, true);
  console.log(`wrote ${path.relative(repoRoot, examplesDir)}`);
}
