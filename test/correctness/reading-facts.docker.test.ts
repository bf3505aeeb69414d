import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyze } from '../../src/agent/analyze.ts';
import { createOfflineAnalyst } from '../../src/agent/offline-analyst/index.ts';
import type { OfflineAnalystOptions } from '../../src/agent/offline-analyst/index.ts';
import { readTrace } from '../../src/trace/reader.ts';

/**
 * The correctness suite: for each kind of file in test/fixtures/reading, the
 * facts a careful analyst would state (shape, header names, a mean, a missing
 * count, a share, how the file was read), computed here from the files
 * themselves, checked against the answer of a real offline run through the
 * real sandbox. It prints `N facts right, M wrong` and passes only at 0 wrong.
 */

const fixtures = path.resolve(import.meta.dirname, '../fixtures/reading');
const repo = path.resolve(import.meta.dirname, '../..');
const run = promisify(execFile);

interface Run {
  answer: string;
  /** Every cell's output, for facts the answer does not quote (the inventory). */
  outputs: string;
  runDir: string;
  exitCode?: number;
  stdout?: string;
  /** report.md, for runs through the CLI. */
  report?: string;
  /** Rows per file and table as the workspace profile counted them (`file` or `file#table`). */
  profileRows: Map<string, number>;
  /** Each profiled column's range as the profile gives it (`file:column` → `min to max`). */
  profileRanges: Map<string, string>;
}

interface Fact {
  workspace: string;
  what: string;
  holds: (run: Run) => boolean;
}

/** The analyst's number format (setup cell `fmt`), so a fact can quote a printed number. */
function fmt(value: number): string {
  if (Number.isInteger(value)) return String(value);
  if (Math.abs(value) >= 10000) return value.toFixed(0);
  if (Math.abs(value) >= 100) return value.toFixed(1);
  if (Math.abs(value) >= 1) return value.toFixed(2);
  return value.toPrecision(3);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? 0)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

/** The overview's range finding; it names the table, as every claim does when several tables are studied. */
function rangeFinding(column: string, table: string, values: number[]): string {
  const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
  return `\`${column}\` (\`${table}\`) ranges from ${fmt(Math.min(...values))} to ${fmt(Math.max(...values))} (median ${fmt(median(values))}, mean ${fmt(mean)}).`;
}

async function csvColumn(
  file: string,
  column: number,
  skip = 1,
  encoding: BufferEncoding = 'utf8',
): Promise<string[]> {
  const text = await readFile(path.join(fixtures, file), encoding);
  return text
    .split('\n')
    .filter((line) => line.length > 0)
    .slice(skip)
    .map((line) => line.split(',')[column] ?? '');
}

const numbers = (values: string[]): number[] =>
  values.filter((value) => /^-?\d+(\.\d+)?$/.test(value)).map(Number);

const says = (text: string) => (result: Run) => result.answer.includes(text);

async function buildFacts(): Promise<Fact[]> {
  const year2000 = numbers(await csvColumn('numeric-header/population.csv', 1, 3));
  const wideFirst = numbers(await csvColumn('headerless/wide.csv', 0, 0));
  const readings2 = await csvColumn('headerless/readings.csv', 1, 0);
  const readings3 = await csvColumn('headerless/readings.csv', 2, 0);
  const attendance = await csvColumn('coercion/games.csv', 3);
  const margin = await csvColumn('coercion/games.csv', 1);
  const big5People = [2600, 2700, 2800, 1800, 450, 360, 260, 320];
  const sjisPeople = [1400, 880, 230, 197, 160, 146, 151, 109];
  const usDates = (await csvColumn('dates/events.csv', 0)).map((text) => {
    const [month, day, year] = text.split('/').map(Number);
    return `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
  });
  const zeros = readings3.filter((value) => value === '0').length;
  const notAvailable = attendance.filter((value) => value === 'Not Available').length;
  const marginMissing = margin.filter((value) => value === '').length;
  const years = Array.from({ length: 8 }, (_, index) => `\`${2000 + index}\``).join(', ');
  const wideNames = Array.from({ length: 12 }, (_, index) => `\`column_${index + 1}\``).join(', ');
  return [
    // A numeric header row below a title and a units line.
    {
      workspace: 'shapes',
      what: 'numeric header: shape and names',
      holds: says(`\`numeric-header/population.csv\`: 6 rows × 9 columns (\`Year\`, ${years}).`),
    },
    {
      workspace: 'shapes',
      what: 'numeric header: the year is a name, not a value (mean)',
      holds: says(rangeFinding('2000', 'numeric-header/population.csv', year2000)),
    },
    {
      workspace: 'shapes',
      what: 'numeric header: preamble said',
      holds: says('2 lines of preamble above the header are skipped.'),
    },
    // Header-less files keep every row, with generated names.
    {
      workspace: 'shapes',
      what: 'header-less: every row, generated names',
      holds: says(
        '`headerless/readings.csv`: 20 rows × 4 columns (`column_1`, `column_2`, `column_3`, `column_4`).',
      ),
    },
    {
      workspace: 'shapes',
      what: 'header-less wide: first row kept',
      holds: says(`\`headerless/wide.csv\`: 10 rows × 12 columns (${wideNames}).`),
    },
    {
      workspace: 'shapes',
      what: 'header-less wide: mean with the first row',
      holds: says(rangeFinding('column_1', 'headerless/wide.csv', wideFirst)),
    },
    {
      workspace: 'shapes',
      what: 'header-less: missing count',
      holds: says(`\`column_2\` misses ${readings2.filter((v) => v === 'null').length} of 20 (20.0%).`),
    },
    {
      workspace: 'shapes',
      what: 'header-less: a share',
      // 0 and 1 ten times each: a tie, so neither is "the most common".
      holds: says(
        zeros === 10
          ? '`column_3` (`headerless/readings.csv`): 2 distinct values, all equally common (50.0% each).'
          : `\`column_3\` (\`headerless/readings.csv\`): 2 distinct values; the most common is \`${zeros > 10 ? 0 : 1}\` (${((100 * Math.max(zeros, 20 - zeros)) / 20).toFixed(1)}%).`,
      ),
    },
    // A malformed line: every row kept, and said.
    {
      workspace: 'shapes',
      what: 'long line: every row kept',
      holds: says('`ragged/ragged.csv`: 3 rows × 4 columns (`name`, `score`, `city`, `column_4`).'),
    },
    {
      workspace: 'shapes',
      what: 'long line: which line, said',
      holds: says('1 line holds more fields than the header (line 3)'),
    },
    // Mostly numeric text with words: kept or converted with a notice; missing as in the file; no row dropped.
    {
      workspace: 'coercion',
      what: 'coercion: no row dropped',
      holds: says('`coercion/games.csv`: 41 rows × 4 columns (`game`, `margin`, `code`, `attendance`).'),
    },
    {
      workspace: 'coercion',
      what: 'coercion: a notice with how many and examples',
      holds: says(`\`attendance\` holds numbers and ${notAvailable} values that are not (\`Not Available\`)`),
    },
    {
      workspace: 'coercion',
      what: 'coercion: missing counts count the file',
      holds: says(`\`margin\` misses ${marginMissing} of 41 (4.9%).`),
    },
    {
      workspace: 'coercion',
      what: 'coercion: mean of the numbers',
      holds: says(rangeFinding('attendance', 'coercion/games.csv', numbers(attendance))),
    },
    {
      workspace: 'coercion',
      what: 'coercion: a code column stays a code',
      holds: (r) => !r.answer.includes('`code` ranges'),
    },
    {
      workspace: 'coercion',
      what: 'amounts with signs: left as text, said',
      holds: (r) =>
        r.answer.includes(
          "`coercion/amounts.csv`: Column growth holds amounts written with a currency or percent sign or in parentheses ('12.5%', '-3.2%', '0.5%')",
        ) && r.answer.includes('Column price holds amounts written'),
    },
    // Legacy encodings, detected and said.
    {
      workspace: 'encodings',
      what: 'Big5: names',
      holds: says('`encodings/big5.csv`: 8 rows × 3 columns (`城市`, `人口`, `備註`).'),
    },
    {
      workspace: 'encodings',
      what: 'Big5: said',
      holds: says('`encodings/big5.csv`: The file is not UTF-8: it was decoded as big5.'),
    },
    {
      workspace: 'encodings',
      what: 'Shift_JIS: names',
      holds: says('`encodings/shift_jis.csv`: 8 rows × 3 columns (`都市`, `人口`, `地方`).'),
    },
    {
      workspace: 'encodings',
      what: 'cp1252: names',
      holds: says('`encodings/cp1252.csv`: 8 rows × 3 columns (`café`, `prix`, `remarque`).'),
    },
    { workspace: 'encodings', what: 'cp1252: said', holds: says('it was decoded as cp1252.') },
    {
      workspace: 'encodings',
      what: 'UTF-16: names',
      holds: says('`encodings/utf16.csv`: 6 rows × 3 columns (`ciudad`, `habitantes`, `región`).'),
    },
    {
      workspace: 'encodings',
      what: 'Big5 or Shift_JIS: a mean',
      holds: (r) =>
        says(rangeFinding('人口', 'encodings/big5.csv', big5People))(r) ||
        says(rangeFinding('人口', 'encodings/shift_jis.csv', sjisPeople))(r),
    },
    {
      workspace: 'encodings',
      what: 'notes in the CLI output',
      holds: (r) => (r.stdout ?? '').includes('note: The file is not UTF-8: it was decoded as big5.'),
    },
    {
      workspace: 'encodings',
      what: 'notes in the report',
      holds: (r) =>
        (r.report ?? '').includes('### How the files were read') &&
        (r.report ?? '').includes('encodings/utf16.csv: The file is not UTF-8: it was decoded as utf-16.'),
    },
    // Identifiers stay identifiers; dates are dates.
    {
      workspace: 'ids-dates',
      what: 'ids: shape and names',
      holds: says(
        '`identifiers/accounts.csv`: 30 rows × 4 columns (`account_id`, `zip`, `customer_id`, `amount`).',
      ),
    },
    {
      workspace: 'ids-dates',
      what: 'ids: read as text, said',
      holds: says(
        'Read as text, not numbers (identifiers: long digit strings or leading zeros): account_id, zip.',
      ),
    },
    {
      workspace: 'ids-dates',
      what: 'ids: no mean of an id',
      holds: (r) => !/`(account_id|zip|customer_id)` ranges/.test(r.answer),
    },
    {
      workspace: 'ids-dates',
      what: 'ids: no float-rounded id anywhere',
      holds: (r) => !/1\.23456789\d*e\+17/.test(r.outputs),
    },
    {
      workspace: 'ids-dates',
      what: 'dates: M/D/YYYY span',
      holds: says(
        `\`us_date\` (\`dates/events.csv\`) spans ${[...usDates].sort()[0]} to ${[...usDates].sort().at(-1)}.`,
      ),
    },
    {
      workspace: 'ids-dates',
      what: 'dates: formats said',
      holds: says('Column eu_date holds dates written DD.MM.YYYY.'),
    },
    {
      workspace: 'ids-dates',
      what: 'dates: an ambiguous format said as such',
      holds: says(
        'Column visit holds dates written MM/DD/YYYY; no day above 12 occurs, so day and month cannot be told apart: read as month first',
      ),
    },
    {
      workspace: 'ids-dates',
      what: 'dates with values that are no date: counted and shown',
      holds: says(
        "`dates/dirty_dates.csv`: Column order_date holds dates and 2 values that are not ('not recorded', '2024-02-30'): no date counts them.",
      ),
    },
    {
      workspace: 'ids-dates',
      what: 'two-digit years: read day first throughout, said',
      holds: (r) =>
        r.answer.includes(
          'Column when holds dates written DD/MM/YY; two-digit years are read as 1969 to 2068.',
        ) && r.profileRanges.get('dates/two_digit_years.csv:when') === '2023-12-25 to 2024-11-10',
    },
    {
      workspace: 'ids-dates',
      what: 'year-months: read as dates, said',
      holds: says('Column period holds dates written YYYYMM (a year and month).'),
    },
    {
      workspace: 'ids-dates',
      what: 'year-months: a span, never a mean',
      holds: (r) =>
        r.answer.includes('`period` (`dates/year_month.csv`) spans 2013-01-01 to 2013-12-01.') &&
        !r.answer.includes('`period` ranges'),
    },
    {
      workspace: 'ids-dates',
      what: 'year-months: totals per month, the grain of the data (never per week)',
      holds: says(
        '`period` runs from 2013-01-01 to 2013-12-01; the total sales per month went from 298 in the first quarter of that span to 424 in the last (42.3% change).',
      ),
    },
    // Empty, constant, header-only.
    {
      workspace: 'edge',
      what: 'header-only: 0 rows × 2 columns (kitten, win)',
      holds: says('`edge/header_only.csv`: 0 rows × 2 columns (`kitten`, `win`).'),
    },
    {
      workspace: 'edge',
      what: 'constant: one column, grammar',
      holds: says('`edge/constant.csv`: 6 rows × 1 column (`colour`).'),
    },
    {
      workspace: 'edge',
      what: 'constant: said',
      holds: says('`edge/constant.csv`: `colour` holds a single value (`red`) in every row.'),
    },
    {
      workspace: 'edge',
      what: 'mostly empty: where present',
      holds: says('`note` holds a single value where present.'),
    },
    { workspace: 'edge', what: 'mostly empty: missing', holds: says('`note` misses 11 of 12 (91.7%).') },
    // A sheet saved as CSV: its source note below an empty row is not a row, in the profile or the analysis.
    {
      workspace: 'footer',
      what: 'footer: shape without the empty row and the note',
      holds: says('`footer/budget.csv`: 15 rows × 4 columns (`group_id`, `item_id`, `item`, `amount`).'),
    },
    {
      workspace: 'footer',
      what: 'footer: said',
      holds: says('`footer/budget.csv`: Lines below the 15 data rows (a footer or notes) are left out.'),
    },
    {
      workspace: 'footer',
      what: 'footer: the note is no value of any column',
      holds: (r) => !r.outputs.includes('Source: budget'),
    },
    {
      workspace: 'footer',
      what: 'footer: the profile counts the rows the analysis counts',
      holds: (r) =>
        r.profileRows.get('footer/budget.csv') === 15 && r.profileRows.get('footer/trailing_empty.csv') === 8,
    },
    {
      workspace: 'footer',
      what: 'empty rows at the end: said',
      holds: says(
        '`footer/trailing_empty.csv`: Empty rows (delimiters only) below the 8 data rows are left out.',
      ),
    },
    {
      workspace: 'footer',
      what: 'a source note with a comma below a blank line: not a row',
      holds: (r) =>
        r.answer.includes('`footer/source_note.csv`: 4 rows × 2 columns (`item`, `price`).') &&
        r.profileRows.get('footer/source_note.csv') === 4,
    },
    // A totals row at the end is no data row: left out, said, the statistics without it.
    {
      workspace: 'totals',
      what: 'totals: shape without the totals row',
      holds: says('`totals/totals.csv`: 10 rows × 3 columns (`product`, `units`, `revenue`).'),
    },
    {
      workspace: 'totals',
      what: 'totals: said',
      holds: says(
        '`totals/totals.csv`: The last row (Total) holds the totals of the rows above: left out, so it is not counted as data.',
      ),
    },
    {
      workspace: 'totals',
      what: 'totals: a TOTAL row with an empty cell is no missing value',
      holds: (r) =>
        r.answer.includes('`totals/totals_blank.csv`: 4 rows × 3 columns') &&
        !r.answer.includes('`city` misses') &&
        r.profileRows.get('totals/totals_blank.csv') === 4,
    },
    {
      workspace: 'totals',
      what: 'totals: the mean without the total',
      holds: says(rangeFinding('units', 'totals/totals.csv', [2, 5, 8, 11, 14, 17, 20, 23, 26, 29])),
    },
    // A workbook: zip codes typed as text stay text; its totals row is left out.
    {
      workspace: 'workbook',
      what: 'workbook: text zip codes are ids, not a measure',
      holds: (r) =>
        r.answer.includes("`workbook/book.xlsx`: Sheet 'Sales': read as text, not numbers") &&
        !r.answer.includes('`zip` ranges'),
    },
    {
      workspace: 'workbook',
      what: 'workbook: the totals row left out, the mean without it',
      holds: (r) =>
        r.answer.includes('`workbook/book.xlsx [Sales]`: 5 rows × 4 columns') &&
        // 300.25 printed at one decimal as Python rounds it (half to even): 300.2.
        r.answer.includes(
          '`revenue` (`workbook/book.xlsx [Sales]`) ranges from 90 to 300.2 (median 150, mean 168.2).',
        ),
    },
    // A header of two rows, a hidden sheet.
    {
      workspace: 'banded',
      what: 'a header of two rows: the band joined to the names, said',
      holds: (r) =>
        r.answer.includes(
          '`banded/banded.xlsx [Sales]`: 3 rows × 5 columns (`Region`, `Q1 Revenue`, `Q1 Units`, `Q2 Revenue`, `Q2 Units`).',
        ) && r.answer.includes("Sheet 'Sales': a header of two rows: the labels of row 3 (Region, Q1, Q2)"),
    },
    {
      workspace: 'banded',
      what: 'a line of metadata above a header is no band',
      holds: says('`banded/banded.xlsx [Meta]`: 3 rows × 3 columns (`id`, `customer`, `amount`).'),
    },
    {
      workspace: 'banded',
      what: 'a hidden sheet: said',
      holds: says(
        "`banded/banded.xlsx`: A sheet is hidden in the workbook (profiled like the others): 'Hidden'.",
      ),
    },
    {
      workspace: 'edge',
      what: 'two columns with one name: said',
      holds: says(
        '`edge/duplicate_names.csv`: Columns share a name: value; pandas reads the later ones as value.1.',
      ),
    },
    {
      workspace: 'json',
      what: 'a key quoted by a note stays text: no live link or tag',
      holds: (r) =>
        r.answer.includes('\\<b\\>\\[z\\](https://evil.example/b)') &&
        !r.answer.includes('[z](https://evil.example/b)') &&
        !r.answer.includes('<b>'),
    },
    {
      workspace: 'json',
      what: 'records under keys that read as numbers: read',
      holds: (r) => r.profileRows.get('json/numbered_keys.json') === 2,
    },
    {
      workspace: 'quarterly',
      what: 'quarterly figures: a sum per quarter, no month-of-year pattern',
      holds: (r) =>
        r.answer.includes('the mean revenue per quarter went from 110') &&
        !r.answer.includes('By calendar month'),
    },
    {
      workspace: 'json',
      what: 'ISO times with a zone: dates',
      holds: (r) => r.profileRanges.get('json/events.jsonl:at')?.startsWith('2024-03-01 10:00:00') === true,
    },
    // Files that used to fail whole for one column.
    {
      workspace: 'edge',
      what: 'the index pandas writes is no column',
      holds: says('`edge/pandas_index.csv`: 4 rows × 2 columns (`name`, `score`).'),
    },
    {
      workspace: 'edge',
      what: 'what the analysis drops and renames beside the profile: said',
      holds: (r) =>
        r.profileRows.get('edge/unnamed.csv') === 5 &&
        r.answer.includes('`edge/unnamed.csv`: 4 rows × 3 columns (`name`, `column_2`, `score`).') &&
        r.answer.includes('`edge/unnamed.csv`: 1 row empty in every column is left out.') &&
        r.answer.includes(
          '`edge/unnamed.csv`: A column with no name is called by its place: `column_2` (`Unnamed: 1` in the profile).',
        ),
    },
    {
      workspace: 'edge',
      what: 'nanosecond timestamps in JSON are profiled',
      holds: (r) => r.profileRows.get('edge/ns_times.json') === 3,
    },
    {
      workspace: 'sqlite',
      what: 'a BLOB column does not make the database unreadable',
      holds: (r) =>
        r.profileRows.get('sqlite/blobs.sqlite#attachments') === 2 &&
        r.profileRows.get('sqlite/blobs.sqlite#orders') === 4 &&
        r.answer.includes('`sqlite/blobs.sqlite [orders]`: 4 rows × 2 columns (`id`, `amount`).') &&
        r.answer.includes('`sqlite/blobs.sqlite [attachments]`: 2 rows × 2 columns (`id`, `data`).') &&
        !r.outputs.includes('UnicodeDecodeError'),
    },
    // JSON whose table is inside: wrapped records, nested records, an object of objects.
    {
      workspace: 'json',
      what: 'wrapped records: the list under its key, said',
      holds: (r) =>
        r.answer.includes(
          '`json/api_dump.json`: 5 rows × 4 columns (`order`, `total`, `customer.name`, `customer.city`).',
        ) &&
        r.answer.includes(
          'The records are the 5 under the key "data"; the other keys ("meta") are left out.',
        ),
    },
    {
      workspace: 'json',
      what: 'nested records: flattened into columns',
      holds: says(
        '`json/nested_records.json`: 3 rows × 4 columns (`id`, `user.name`, `user.age`, `user.address.city`).',
      ),
    },
    {
      workspace: 'json',
      what: 'an object of objects: a row per key',
      holds: says('`json/by_country.json`: 3 rows × 3 columns (`key`, `capital`, `population`).'),
    },
    // Nothing readable: named termination, exit 3.
    { workspace: 'unreadable', what: 'nothing readable: exit 3', holds: (r) => r.exitCode === 3 },
    {
      workspace: 'unreadable',
      what: 'nothing readable: no-data, with each file and why',
      holds: (r) =>
        (r.stdout ?? '').includes('no-data') &&
        (r.stdout ?? '').includes('empty.csv: EmptyFile: the file is empty (0 bytes)') &&
        (r.stdout ?? '').includes('encrypted (password-protected)'),
    },
    {
      workspace: 'unreadable',
      what: 'nothing readable: why in words, each sentence ending once',
      holds: (r) =>
        (r.stdout ?? '').includes(
          'fake.xlsx: could not be read (Not an Excel workbook: the file holds text (a CSV or another text file named as a workbook?))',
        ) &&
        (r.stdout ?? '').includes(
          'broken.json: could not be read (Not valid JSON: expecting property name enclosed in double quotes at line 1, column 20)',
        ) &&
        !(r.stdout ?? '').includes('..') &&
        !(r.stdout ?? '').includes('specify an engine'),
    },
    // A large file: figures from a sample, of a stated size; every row counted.
    {
      workspace: 'big',
      what: 'big: sample size and exact rows',
      holds: says(
        'Figures for `big.csv` come from a random sample of 10000 of its 60000 rows (every row was counted).',
      ),
    },
    // After an out-of-memory restart: a smaller reload, said; no cell runs on lost tables.
    {
      workspace: 'restart',
      what: 'restart: the reload with less memory is said',
      holds: says(
        'The tables were gone after a kernel restart (most likely out of memory), so they were reloaded with less memory',
      ),
    },
    {
      workspace: 'restart',
      what: 'restart: figures from a stated sample, every row counted',
      holds: (r) => r.answer.includes(`of its ${restartRows} rows (every row was counted).`),
    },
    {
      workspace: 'restart',
      what: 'restart: no NameError after the reload',
      holds: (r) => !r.outputs.includes('NameError'),
    },
    {
      workspace: 'many',
      what: 'many: the CLI says how many files were profiled',
      holds: (r) => (r.stdout ?? '').includes('200 of 230 files profiled'),
    },
    // Many files: every one inventoried.
    {
      workspace: 'many',
      what: 'many: how many, said',
      holds: says(
        // 200 listed, 40 of them with a table (the first message's limit); 10 more for the tolerant reader.
        'The workspace holds 230 files: 40 were read, 150 were not read (the reasons follow), 10 are left to the tolerant reader and 30 were past the limit of files listed to the analyst, so not read.',
      ),
    },
    {
      workspace: 'many',
      what: 'many: the inventory lists every file',
      holds: (r) => r.outputs.includes('inventory rows: 230'),
    },
  ];
}

let workDir: string;
let restartRows = 0;
const runs = new Map<string, Run>();

async function runCli(workspaceDir: string, runDir: string): Promise<{ code: number; stdout: string }> {
  return run(
    process.execPath,
    [
      path.join(repo, 'bin/datalyst.js'),
      'analyze',
      '--offline',
      '--out',
      runDir,
      workspaceDir,
      'Describe the data.',
    ],
    { cwd: repo, env: { ...process.env, NO_COLOR: '1' }, maxBuffer: 64 * 1024 * 1024 },
  ).then(
    (ok) => ({ code: 0, stdout: ok.stdout + ok.stderr }),
    (error: { code?: number; stdout?: string; stderr?: string }) => ({
      code: error.code ?? -1,
      stdout: `${error.stdout ?? ''}${error.stderr ?? ''}`,
    }),
  );
}

/** A run of the offline analyst on copies of fixture folders: through the library, or the CLI (`cli`). */
async function offlineRun(
  name: string,
  folders: string[],
  options: OfflineAnalystOptions & { cli?: boolean; memoryMb?: number } = {},
  extra?: (dir: string) => Promise<void>,
): Promise<void> {
  const workspaceDir = path.join(workDir, name);
  await mkdir(workspaceDir, { recursive: true });
  for (const folder of folders)
    await cp(path.join(fixtures, folder), path.join(workspaceDir, folder), { recursive: true });
  await extra?.(workspaceDir);
  const runDir = path.join(workDir, `${name}-run`);
  let cli: { code: number; stdout: string } | null = null;
  if (options.cli === true) cli = await runCli(workspaceDir, runDir);
  else {
    const { cli: _cli, memoryMb, ...analyst } = options;
    await analyze({
      instruction: 'Describe the data.',
      workspaceDir,
      model: createOfflineAnalyst(analyst),
      outDir: runDir,
      ...(memoryMb === undefined ? {} : { sandbox: { limits: { memoryMb } } }),
    });
  }
  const trace = await readTrace(path.join(runDir, 'trace.jsonl'));
  let answer = '';
  const outputs: string[] = [];
  const profileRows = new Map<string, number>();
  const profileRanges = new Map<string, string>();
  for (const record of trace.records) {
    if (record.type === 'execution') outputs.push(record.executeText);
    if (record.type === 'workspace-profile')
      for (const file of record.profile.files)
        for (const table of file.tables) {
          profileRows.set(table.name === '' ? file.path : `${file.path}#${table.name}`, table.rows);
          for (const column of table.columns)
            profileRanges.set(`${file.path}:${column.name}`, `${column.min ?? ''} to ${column.max ?? ''}`);
        }
    if (record.type === 'run-end') answer = record.answer ?? '';
  }
  try {
    const rows = (await readFile(path.join(runDir, 'artifacts', 'datalyst_inventory.csv'), 'utf8'))
      .trim()
      .split('\n');
    outputs.push(`inventory rows: ${rows.length - 1}`);
  } catch {
    // no inventory written
  }
  const report = cli === null ? '' : await readFile(path.join(runDir, 'report.md'), 'utf8').catch(() => '');
  runs.set(name, {
    answer,
    outputs: outputs.join('\n'),
    profileRows,
    profileRanges,
    runDir,
    ...(cli === null ? {} : { exitCode: cli.code, stdout: cli.stdout, report }),
  });
}

beforeAll(async () => {
  workDir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-reading-'));
  await offlineRun('shapes', ['numeric-header', 'headerless', 'ragged']);
  await offlineRun('coercion', ['coercion']);
  await offlineRun('encodings', ['encodings'], { cli: true });
  await offlineRun('ids-dates', ['identifiers', 'dates']);
  await offlineRun('edge', ['edge']);
  await offlineRun('footer', ['footer']);
  await offlineRun('totals', ['totals']);
  await offlineRun('workbook', ['workbook']);
  await offlineRun('sqlite', ['sqlite']);
  await offlineRun('json', ['json']);
  await offlineRun('banded', ['banded']);
  await offlineRun('quarterly', ['quarterly']);
  await offlineRun('big', [], { maxRows: 10_000, largeFileBytes: 256 * 1024 }, async (dir) => {
    const lines = ['id,group,amount'];
    for (let row = 0; row < 60_000; row += 1) lines.push(`${row},g${row % 7},${(row * 37) % 1000}.5`);
    await writeFile(path.join(dir, 'big.csv'), `${lines.join('\n')}\n`);
  });
  await offlineRun('many', [], { cli: true }, async (dir) => {
    for (let file = 0; file < 230; file += 1) {
      await writeFile(
        path.join(dir, `part_${String(file).padStart(3, '0')}.csv`),
        `k,v\na,${file}\nb,${file + 1}\n`,
      );
    }
  });
  // A CSV under the chunked-read size whose text columns need ~10x its size: a plain read runs out of
  // memory in a 384 MiB sandbox, the kernel restarts, and the analyst must reload with less memory.
  await offlineRun('restart', [], { memoryMb: 384 }, async (dir) => {
    const lines = ['a,b,c,d,e'];
    let bytes = 0;
    for (let row = 0; bytes < 31 * 1024 * 1024; row += 1) {
      const line = [0, 1, 2, 3, 4].map((offset) => (row * 5 + offset + 0x10000).toString(16)).join(',');
      lines.push(line);
      bytes += line.length + 1;
    }
    restartRows = lines.length - 1;
    await writeFile(path.join(dir, 'wide_text.csv'), `${lines.join('\n')}\n`);
  });
  // Through the CLI, for its exit code.
  await offlineRun('unreadable', ['unreadable'], { cli: true });
}, 900_000);

afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

describe('reading real files right: the correctness suite', () => {
  it('states every fact a careful analyst would', async () => {
    const facts = await buildFacts();
    const wrong: string[] = [];
    for (const fact of facts) {
      const result = runs.get(fact.workspace);
      if (result === undefined || !fact.holds(result)) wrong.push(`${fact.workspace}: ${fact.what}`);
    }
    console.log(`${facts.length - wrong.length} facts right, ${wrong.length} wrong`);
    for (const line of wrong) console.log(`  wrong: ${line}`);
    if (wrong.length > 0) {
      for (const name of new Set(wrong.map((line) => line.split(':')[0] ?? ''))) {
        console.log(
          `--- answer of ${name} ---\n${runs.get(name)?.answer ?? ''}${runs.get(name)?.stdout ?? ''}`,
        );
      }
    }
    expect(wrong).toEqual([]);
  });
});
