import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyze } from '../../src/agent/analyze.ts';
import type { AnalysisResult } from '../../src/agent/events.ts';
import { createOfflineAnalyst } from '../../src/agent/offline-analyst/index.ts';
import { readTrace } from '../../src/trace/reader.ts';
import type { ExecutionRecord } from '../../src/trace/schema.ts';
import { numbersMissingFrom } from './support/answer-numbers.ts';

/**
 * Workspaces made to be awkward: a file name with quotes, a table too long to
 * study whole, a table too wide to chart whole, an empty file and a file no
 * step reads. The analyst must bound its work and still finish cleanly.
 */

let workspaceDir: string;
let runsDir: string;
let result: AnalysisResult;
let executions: ExecutionRecord[];

function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

beforeAll(async () => {
  workspaceDir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-awkward-'));
  runsDir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-awkward-runs-'));
  const random = seeded(11);
  const long = ['id,group,amount,score'];
  for (let row = 0; row < 230_000; row += 1) {
    long.push(
      `${row},g${Math.floor(random() * 5)},${(random() * 1000).toFixed(2)},${Math.floor(random() * 100)}`,
    );
  }
  await writeFile(path.join(workspaceDir, 'long.csv'), `${long.join('\n')}\n`);
  const wideHeader = Array.from({ length: 60 }, (_, index) => `m${index + 1}`);
  const wide = [wideHeader.join(',')];
  for (let row = 0; row < 150; row += 1)
    wide.push(wideHeader.map(() => (random() * 10).toFixed(3)).join(','));
  await writeFile(path.join(workspaceDir, 'wide.csv'), `${wide.join('\n')}\n`);
  await writeFile(
    path.join(workspaceDir, `it's "odd" name.csv`),
    'city,visitors\nOslo,12\nLima,40\nPune,33\nKyiv,25\nNuuk,3\nBern,17\n',
  );
  await writeFile(path.join(workspaceDir, 'empty.csv'), '');
  await writeFile(path.join(workspaceDir, 'scan.pdf'), '%PDF-1.4 not really');
  result = await analyze({
    instruction: 'Which group has the highest amount? Also compare the visitors by city.',
    workspaceDir,
    model: createOfflineAnalyst(),
    outDir: path.join(runsDir, 'run'),
  });
  executions = (await readTrace(path.join(runsDir, 'run', 'trace.jsonl'))).records.filter(
    (record): record is ExecutionRecord => record.type === 'execution',
  );
}, 600_000);

afterAll(async () => {
  await rm(workspaceDir, { recursive: true, force: true });
  await rm(runsDir, { recursive: true, force: true });
});

describe('the offline analyst on an awkward workspace', () => {
  it('answers, and no cell fails', () => {
    expect(result.termination.reason).toBe('answered');
    expect(
      executions.filter((execution) => execution.result.status !== 'ok').map((e) => e.executeText),
    ).toEqual([]);
  });

  it('studies a fixed sample of a table too long to study whole', () => {
    const load = executions.find((execution) => execution.code.includes('# offline-analyst step: load'));
    expect(load?.executeText).toContain(
      'long.csv: 200000 rows × 4 columns (`id`, `group`, `amount`, `score`) (a random sample of the 230000 rows)',
    );
  });

  it('charts a bounded number of columns of a wide table', () => {
    const distributions = executions.find((execution) =>
      execution.code.includes('# offline-analyst step: distributions'),
    );
    const wideLines = (distributions?.executeText ?? '')
      .split('\n')
      .filter((line) => line.startsWith('wide.csv / '));
    expect(wideLines.length).toBeLessThanOrEqual(6);
  });

  it('reads the file with quotes in its name and lists what it could not read', () => {
    const load = executions.find((execution) => execution.code.includes('# offline-analyst step: load'));
    expect(load?.executeText).toContain(`it's "odd" name.csv: 6 rows × 2 columns`);
    expect(load?.executeText).toMatch(/scan\.pdf/);
  });

  it('answers the instruction from its own outputs', () => {
    expect(result.answer).toMatch(/By `group` in `long\.csv`: `g\d` brings the largest total `amount`/);
    expect(
      numbersMissingFrom(
        result.answer ?? '',
        executions.map((execution) => execution.executeText),
      ),
    ).toEqual([]);
  });
});
