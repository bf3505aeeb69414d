import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOfflineAnalyst, readFindings } from '../../src/agent/offline-analyst/index.ts';
import type { DeepRecord } from '../../src/deep/index.ts';
import { deepAnalyze } from '../../src/deep/index.ts';
import { createWarmPool } from '../../src/sandbox/index.ts';
import type { WarmPool } from '../../src/sandbox/index.ts';
import { readTrace } from '../../src/trace/index.ts';
import type { ExecutionRecord } from '../../src/trace/index.ts';

/**
 * The offline deep analysis of the mixed workspace a first-time user ran:
 * orders.csv, a ragged CSV whose columns hold only text, and three corrupt
 * files. What broke: the corrupt files vanished from the brief; each
 * sub-analysis said "1 were listed to the analyst and 4 past that limit were
 * not read"; the ragged table's sub-analysis had no section; "The data" said
 * "`units` ranges from …" with no table named.
 */

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

let root = '';
let pool: WarmPool;
let record: DeepRecord;
const executions = new Map<string, ExecutionRecord[]>();

function stageOutput(subId: string, stage: string): string {
  return (
    executions.get(subId)?.find((execution) => execution.code.includes(`# offline-analyst step: ${stage}\n`))
      ?.result.stdout.text ?? ''
  );
}

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'datalyst-deep-mixed-'));
  const workspaceDir = path.join(root, 'workspace');
  await mkdir(workspaceDir);
  await copyFile(
    path.join(repoRoot, 'workspace-examples', 'sales', 'orders.csv'),
    path.join(workspaceDir, 'orders.csv'),
  );
  // Line 3 holds a field more than the header; no column is a number, a category or a date.
  await writeFile(
    path.join(workspaceDir, 'ragged.csv'),
    'code,comment\nA1,alpha\nA2,beta,extra\nA3,gamma\nA4,delta\nA5,epsilon\n',
  );
  await writeFile(path.join(workspaceDir, 'broken.xlsx'), 'PK\x03\x04garbage, not a zip');
  await writeFile(path.join(workspaceDir, 'broken.sqlite'), 'SQLite format 3\x00garbage');
  await writeFile(path.join(workspaceDir, 'broken.json'), '{"a": [1, 2,');
  pool = createWarmPool({ size: 2 });
  const run = await deepAnalyze({
    instruction: 'Generate a data science report.',
    workspaceDir,
    model: createOfflineAnalyst(),
    outDir: path.join(root, 'deep'),
    maxSubAnalyses: 4,
    concurrency: 2,
    warmPool: pool,
  });
  record = run.record;
  for (const sub of record.subAnalyses) {
    const { records } = await readTrace(path.join(root, 'deep', sub.runDir ?? '', 'trace.jsonl'));
    executions.set(
      sub.id,
      records.filter((entry): entry is ExecutionRecord => entry.type === 'execution'),
    );
  }
}, 600_000);

afterAll(async () => {
  await pool?.close();
  await rm(root, { recursive: true, force: true });
});

describe('the offline deep analysis of a workspace with unreadable files', () => {
  it('answers; every sub-analysis answers and no cell fails', () => {
    expect(record.termination.reason).toBe('answered');
    expect(record.subAnalyses.map((sub) => sub.outcome)).toEqual(['answered', 'answered', 'answered']);
    for (const [id, list] of executions)
      expect(
        list.filter((execution) => execution.result.status !== 'ok'),
        id,
      ).toEqual([]);
  });

  it('names each file that could not be read in the brief; why is said once, in their own section', () => {
    const last = record.brief?.questions.at(-1);
    expect(last).toEqual({
      question: 'Which files could not be read, and can a tolerant reader read them?',
      tables: ['broken.json', 'broken.sqlite', 'broken.xlsx'],
    });
    // Each sub-analysis's inventory repeats the reasons; the report states them in one section.
    const sections = record.sections.map((section) => ({ title: section.title, markdown: section.markdown }));
    const saying = sections.filter((section) => section.markdown.includes('file is not a database'));
    expect(saying.map((section) => section.title)).toEqual(['The files that could not be read']);
  });

  it("gives each file its own reason in a sub-analysis's inventory, with the counts right", () => {
    const load = readFindings(stageOutput('S1', 'load'));
    expect(load).toContain(
      'The workspace holds 5 files: 1 was read, 3 could not be read and 1 is not one of the tables this part of the analysis studies.',
    );
    expect(load.find((line) => line.startsWith('Could not be read: '))).toBe(
      'Could not be read: `broken.json` (not valid JSON: expecting value at line 1, column 13); ' +
        '`broken.sqlite` (file is not a database); ' +
        '`broken.xlsx` (not an Excel workbook: its bytes are not the zip archive an .xlsx is (damaged, cut short, or another kind of file renamed)).',
    );
    for (const [id, list] of executions)
      expect(list.map((execution) => execution.result.stdout.text).join('\n'), id).not.toMatch(
        /past (that|the) limit/,
      );
  });

  it('gives every researched sub-analysis with evidence a section', () => {
    const titles = record.outline?.sections.map((section) => section.title) ?? [];
    expect(titles).toEqual(['The data', 'orders.csv', 'ragged.csv', 'The files that could not be read']);
    const cited = record.outline?.sections.flatMap((section) => section.evidenceIds) ?? [];
    expect([...cited].sort()).toEqual(record.evidence.map((item) => item.id).sort());
  });

  it('names the table of every claim in "The data"', () => {
    const data = record.sections.find((section) => section.title === 'The data')?.markdown ?? '';
    // pandas: orders.csv units 2…12, median 5, mean 5.160833; region North 373 of 1200.
    expect(data).toContain('- `units` (`orders.csv`) ranges from 2 to 12 (median 5, mean 5.16).');
    expect(data).toContain(
      '- `region` (`orders.csv`): 4 distinct values; the most common is `North` (31.1%).',
    );
    for (const line of data.split('\n').filter((entry) => entry.startsWith('- ')))
      expect(line).toMatch(/`(orders|ragged)\.csv`/);
  });

  it('claims no columns named in an instruction that named none', () => {
    for (const [id] of executions) expect(stageOutput(id, 'focus'), id).toBe('');
    const text = record.sections.map((section) => section.markdown).join('\n');
    expect(text).not.toMatch(/instruction/i);
  });
});
