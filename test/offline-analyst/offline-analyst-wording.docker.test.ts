import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyze } from '../../src/agent/analyze.ts';
import type { AnalysisResult } from '../../src/agent/events.ts';
import { createOfflineAnalyst } from '../../src/agent/offline-analyst/index.ts';
import { readFindings } from '../../src/agent/offline-analyst/index.ts';
import { readTrace } from '../../src/trace/reader.ts';
import type { ExecutionRecord } from '../../src/trace/schema.ts';

/**
 * What the offline analyst's findings say, in the real sandbox: a column whose
 * values are all distinct has no "most common" one, a tie at the top is named,
 * with two tables each claim names its table, and a joined table's columns are
 * named after its file (enrolled.xlsx's only sheet, Sheet1, gave `Sheet1.rows`).
 * Numbers checked with pandas on the same data.
 */

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const studentLoan = path.join(repoRoot, 'workspace-examples', 'student-loan');

interface Run {
  result: AnalysisResult;
  executions: ExecutionRecord[];
  findings: string[];
}

let root = '';
const runs: Record<'products' | 'joined', Run | undefined> = { products: undefined, joined: undefined };

async function run(name: 'products' | 'joined', instruction: string, workspaceDir: string): Promise<Run> {
  const outDir = path.join(root, 'runs', name);
  const result = await analyze({ instruction, workspaceDir, model: createOfflineAnalyst(), outDir });
  const executions = (await readTrace(path.join(outDir, 'trace.jsonl'))).records.filter(
    (record): record is ExecutionRecord => record.type === 'execution',
  );
  const findings = executions.flatMap((execution) => readFindings(execution.result.stdout.text));
  return { result, executions, findings };
}

function stageOutput(of: Run | undefined, stage: string): string {
  return (
    of?.executions.find((execution) => execution.code.includes(`# offline-analyst step: ${stage}\n`))?.result
      .stdout.text ?? ''
  );
}

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'datalyst-wording-'));
  const products = path.join(root, 'products');
  const joined = path.join(root, 'joined');
  await mkdir(products);
  await writeFile(
    path.join(products, 'products.csv'),
    'product,category,list_price\nTrail Backpack,Outdoor,89\nRain Jacket,Apparel,120\n' +
      'Fleece Hoodie,Apparel,65\nWool Socks,Apparel,14\nHeadlamp,Electronics,32\n' +
      'GPS Watch,Electronics,249\nWater Filter,Outdoor,39\nCamping Stove,Outdoor,54\n',
  );
  await writeFile(
    path.join(products, 'stores.csv'),
    'store,region,visits\nS1,North,120\nS2,North,80\nS3,South,95\nS4,North,60\nS5,South,150\nS6,East,40\n',
  );
  // A mixed workspace: the enrolment table only as a workbook of one sheet (Sheet1).
  await mkdir(joined);
  for (const file of ['person.csv', 'male.csv', 'unemployed.csv', 'enrolled.xlsx'])
    await copyFile(path.join(studentLoan, file), path.join(joined, file));
  [runs.products, runs.joined] = await Promise.all([
    run('products', 'How do product and category split?', products),
    run('joined', 'Generate a data science report.', joined),
  ]);
}, 600_000);

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('the offline analyst says what the values show', () => {
  it('answers both, and no cell fails', () => {
    for (const entry of [runs.products, runs.joined]) {
      expect(entry?.result.termination.reason).toBe('answered');
      expect(entry?.executions.filter((execution) => execution.result.status !== 'ok')).toEqual([]);
    }
  });

  it('calls a column of unique values all distinct, not one of them the most common', () => {
    // pandas: products.csv's product has 8 rows and 8 distinct values.
    expect(runs.products?.findings).toContain('`product` (`products.csv`): all 8 values are distinct.');
    expect(runs.products?.findings.join('\n')).not.toMatch(/`Trail Backpack` is the most common/);
  });

  it('names a tie at the top instead of picking one of the tied values', () => {
    // pandas: Outdoor 3, Apparel 3, Electronics 2 of 8 rows.
    expect(runs.products?.findings).toContain(
      '`category` (`products.csv`): 3 distinct values; `Outdoor` and `Apparel` are the most common, 37.5% each.',
    );
    expect(runs.products?.findings.join('\n')).not.toMatch(/the most common is `(Outdoor|Apparel)`/);
  });

  it("names each overview claim's table when two tables are studied", () => {
    const overview = readFindings(stageOutput(runs.products, 'overview'));
    // pandas: list_price 14…249, median 59.5, mean 82.75; visits 40…150, median 87.5, mean 90.83; region North 3 of 6.
    expect(overview).toContain(
      '`list_price` (`products.csv`) ranges from 14 to 249 (median 59.50, mean 82.75).',
    );
    expect(overview).toContain('`visits` (`stores.csv`) ranges from 40 to 150 (median 87.50, mean 90.83).');
    expect(overview).toContain(
      '`region` (`stores.csv`): 3 distinct values; the most common is `North` (50.0%).',
    );
    expect(
      overview.filter((line) => / ranges from |distinct values/.test(line) && !/\(`\w+\.csv`\)/.test(line)),
    ).toEqual([]);
  });

  it("names a joined table's columns after its file, not its only sheet", () => {
    const relations = readFindings(stageOutput(runs.joined, 'relations'));
    const added = relations.find((line) => line.startsWith('Columns added:')) ?? '';
    expect(added).toContain('`enrolled.rows`');
    expect(added).toContain('`male`');
    expect(added).not.toContain('Sheet1');
  });

  it('runs no breakdown "of the columns the instruction names" when it names none', () => {
    expect(stageOutput(runs.joined, 'focus')).toBe('');
    expect(runs.joined?.result.answer ?? '').not.toMatch(/instruction names|named in the instruction/);
  });
});
