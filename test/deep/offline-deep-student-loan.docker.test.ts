import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeepRecord } from '../../src/deep/index.ts';
import { readDeepRecord } from '../../src/deep/index.ts';
import { renderDeepRunFolder } from '../../src/report/index.ts';
import { createWarmPool } from '../../src/sandbox/index.ts';
import type { WarmPool } from '../../src/sandbox/index.ts';
import { readTrace } from '../../src/trace/index.ts';
import { createOfflineAnalyst } from '../../src/agent/index.ts';
import { deepAnalyze } from '../../src/deep/index.ts';

/**
 * The offline deep analysis of the student-loan example, with real parts: the
 * offline roles, four sub-analyses as ordinary threads in Docker sessions
 * from a warm pool (two at once on this machine), the evidence grounded in
 * their outputs, and the deep report — through the engine (`deepAnalyze`) as
 * `datalyst analyze --offline --deep` drives it.
 */

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const workspaceDir = path.join(repoRoot, 'workspace-examples', 'student-loan');

let root = '';
let pool: WarmPool;
let record: DeepRecord;
let html = '';

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'datalyst-deep-offline-'));
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
  await renderDeepRunFolder(path.join(root, 'deep'));
  html = await readFile(path.join(root, 'deep', 'report.html'), 'utf8');
}, 600_000);

afterAll(async () => {
  await pool?.close();
  await rm(root, { recursive: true, force: true });
});

describe('the offline deep analysis of student-loan', () => {
  it('answers with four sub-analyses, each an ordinary run folder under sub/', async () => {
    expect(record.termination.reason).toBe('answered');
    // The brief asks more than the budget of four researches: the ending says which share was left out.
    const asked = record.brief?.questions.length ?? 0;
    expect(asked).toBeGreaterThan(4);
    expect(record.termination.detail).toContain(
      ` ${asked - 4} of the brief's ${asked} questions were not researched: the budget is 4 sub-analyses (--sub-analyses ${asked} would research them all).`,
    );
    expect(await readDeepRecord(path.join(root, 'deep'))).toEqual(record);
    expect(record.subAnalyses.map((sub) => [sub.id, sub.outcome, sub.runDir])).toEqual([
      ['S1', 'answered', 'sub/S1'],
      ['S2', 'answered', 'sub/S2'],
      ['S3', 'answered', 'sub/S3'],
      ['S4', 'answered', 'sub/S4'],
    ]);
    for (const sub of record.subAnalyses) {
      const { records } = await readTrace(path.join(root, 'deep', sub.runDir ?? '', 'trace.jsonl'));
      const failed = records.filter((entry) => entry.type === 'execution' && entry.result.status !== 'ok');
      expect(failed, sub.id).toEqual([]);
    }
  });

  it('runs two sub-analyses at once: the first two overlap in time', () => {
    const [first, second] = record.subAnalyses.map((sub) => ({
      startedMs: Date.parse(sub.startedAt ?? ''),
      endedMs: Date.parse(sub.endedAt ?? ''),
    }));
    if (first === undefined || second === undefined) throw new Error('no sub-analyses');
    expect(second.startedMs).toBeLessThan(first.endedMs);
    expect(first.startedMs).toBeLessThan(second.endedMs);
  });

  it('lets each sub-analysis study only the tables of its sub-question', async () => {
    for (const sub of record.subAnalyses) {
      const { records } = await readTrace(path.join(root, 'deep', sub.runDir ?? '', 'trace.jsonl'));
      const load = records.find(
        (entry) => entry.type === 'execution' && entry.code.includes('offline-analyst step: load'),
      );
      const code = load?.type === 'execution' ? load.code : '';
      const read = Array.from(code.matchAll(/^ {4}\("([^"]+)", "[^"]*", /gm), (match) => match[1]);
      expect(read.sort(), sub.id).toEqual([...sub.tables].sort());
    }
  });

  it('writes sections that cite evidence, every number of evidence and sections grounded', () => {
    expect(record.sections.length).toBeGreaterThanOrEqual(4);
    for (const section of record.sections) {
      expect(section.citedEvidenceIds.length, section.title).toBeGreaterThan(0);
      expect(section.markdown).toMatch(/\[EV\d+\]/);
    }
    const numbers = [
      ...record.evidence.flatMap((item) => item.numbers),
      ...record.sections.flatMap((section) => section.numbers),
    ];
    expect(numbers.length).toBeGreaterThan(30);
    expect(numbers.filter((number) => !number.verified)).toEqual([]);
  });

  it('shows the sections in the HTML report with linked citations and no unverified number', () => {
    for (const section of record.sections) expect(html).toContain(`id="section-${section.id}"`);
    const sections = html.slice(html.indexOf('id="report"'), html.indexOf('id="evidence"'));
    expect(sections).toContain('href="#evidence-EV1"');
    expect(sections).toContain('class="num num-verified"');
    expect(sections).not.toContain('num-unverified');
    expect(sections).toMatch(/<figure class="(?:figure|chart)" id="visual-S\d_E\d+-(?:figure|chart)-\d+">/);
  });
});
