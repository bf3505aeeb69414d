import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
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
  await rm(workspaceDir, { recursive: true, force: true });
  await mkdir(workspaceDir);
  for (const [file, content] of Object.entries(files))
    await writeFile(path.join(workspaceDir, file), content);
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

describe('the offline analyst reads what the profile read', () => {
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
});
