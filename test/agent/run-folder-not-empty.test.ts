import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyze, createOfflineAnalyst, openThread, rerunAnalysis } from '../../src/agent/index.ts';
import { deepAnalyze } from '../../src/deep/index.ts';
import { ConfigError, DatalystError } from '../../src/errors/index.ts';
import { createFakeSandbox, printed, testProfile } from './support/fake-session.ts';
import { writeRecordedRun } from '../fixtures/traces/recorded-run.ts';
import { useTempDirs } from '../support/temp-dirs.ts';

/**
 * Regression: the library's outDir did not have to be new or empty.
 * `analyze({ …, outDir: workspaceDir })` replaced the user's trace.json with
 * Datalyst's and wrote trace.jsonl and artifacts/ into the data folder. Now a
 * run folder that holds anything, or is a file, is refused before anything is
 * written and before any sandbox opens.
 */

const tempDirs = useTempDirs();

const userTrace = '{"mine": "not a Datalyst trace"}\n';

async function workspace(): Promise<{ root: string; workspaceDir: string }> {
  const root = await tempDirs.make('datalyst-outdir-');
  const workspaceDir = path.join(root, 'ws');
  await mkdir(workspaceDir);
  await writeFile(path.join(workspaceDir, 'sales.csv'), 'region,revenue\nnorth,1234\n');
  await writeFile(path.join(workspaceDir, 'trace.json'), userTrace);
  return { root, workspaceDir };
}

async function expectRefusedUntouched(run: Promise<unknown>, dir: string, before: string[]): Promise<void> {
  const error: unknown = await run.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ConfigError);
  if (!DatalystError.isInstance(error)) return;
  expect(error.code).toBe('CONFIG_INVALID');
  expect(error.message).toContain('already holds files');
  expect(error.fix).toContain('new or empty folder as outDir');
  expect(String(error.cause)).toContain('trace.json');
  expect((await readdir(dir)).sort()).toEqual(before);
}

describe('a run folder (outDir) that already holds files', () => {
  it('analyze() with the workspace as outDir is refused; the user trace.json is kept, nothing is added', async () => {
    const { workspaceDir } = await workspace();
    const sandbox = createFakeSandbox({ run: () => printed('1\n'), profile: testProfile });
    await expectRefusedUntouched(
      analyze({
        instruction: 'x',
        workspaceDir,
        model: createOfflineAnalyst(),
        outDir: workspaceDir,
        createSandbox: sandbox.factory,
      }),
      workspaceDir,
      ['sales.csv', 'trace.json'],
    );
    expect(await readFile(path.join(workspaceDir, 'trace.json'), 'utf8')).toBe(userTrace);
    expect(sandbox.sessions).toHaveLength(0);
  });

  it('openThread() is refused, and so is a runId whose default folder holds files', async () => {
    const { root, workspaceDir } = await workspace();
    const model = createOfflineAnalyst();
    await expectRefusedUntouched(openThread({ workspaceDir, model, outDir: workspaceDir }), workspaceDir, [
      'sales.csv',
      'trace.json',
    ]);
    const runsDir = path.join(root, 'runs');
    await mkdir(path.join(runsDir, 'earlier'), { recursive: true });
    await writeFile(path.join(runsDir, 'earlier', 'trace.json'), userTrace);
    await expectRefusedUntouched(
      openThread({ workspaceDir, model, runsDir, runId: 'earlier' }),
      path.join(runsDir, 'earlier'),
      ['trace.json'],
    );
  });

  it('a refusal leaves no work behind that fails later (an aborted signal: the hashing rejected unhandled)', async () => {
    const { workspaceDir } = await workspace();
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => {
      unhandled.push(reason);
    };
    process.on('unhandledRejection', onUnhandled);
    try {
      await expect(
        openThread({
          workspaceDir,
          model: createOfflineAnalyst(),
          outDir: workspaceDir,
          signal: AbortSignal.abort(),
        }),
      ).rejects.toBeInstanceOf(ConfigError);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('a file as outDir is refused', async () => {
    const { workspaceDir } = await workspace();
    const file = path.join(workspaceDir, 'sales.csv');
    await expect(openThread({ workspaceDir, model: createOfflineAnalyst(), outDir: file })).rejects.toThrow(
      /is a file/,
    );
  });

  it('a new or empty folder is used', async () => {
    const { root, workspaceDir } = await workspace();
    const empty = path.join(root, 'empty');
    await mkdir(empty);
    const thread = await openThread({ workspaceDir, model: createOfflineAnalyst(), outDir: empty });
    expect(await readdir(empty)).toContain('trace.jsonl');
    await thread.close();
    const fresh = await openThread({
      workspaceDir,
      model: createOfflineAnalyst(),
      outDir: path.join(root, 'new'),
    });
    await fresh.close();
  });

  it('deepAnalyze() is refused the same way, before any sandbox', async () => {
    const { workspaceDir } = await workspace();
    const sandbox = createFakeSandbox({ run: () => printed('1\n'), profile: testProfile });
    await expectRefusedUntouched(
      deepAnalyze({
        instruction: 'x',
        workspaceDir,
        outDir: workspaceDir,
        model: createOfflineAnalyst(),
        createSandbox: sandbox.factory,
      }),
      workspaceDir,
      ['sales.csv', 'trace.json'],
    );
    expect(sandbox.sessions).toHaveLength(0);
  });

  it('rerunAnalysis() is refused the same way, before any sandbox (it opened its trace with only trace.jsonl refused)', async () => {
    const { root, workspaceDir } = await workspace();
    const oldRun = path.join(root, 'old-run');
    await writeRecordedRun(oldRun, workspaceDir);
    const before = (await readdir(workspaceDir)).sort();
    let sandboxes = 0;
    await expectRefusedUntouched(
      rerunAnalysis({
        runDir: oldRun,
        workspaceDir,
        outDir: workspaceDir,
        createSandbox: () => {
          sandboxes += 1;
          throw new Error('no sandbox in this test');
        },
      }),
      workspaceDir,
      before,
    );
    expect(await readFile(path.join(workspaceDir, 'trace.json'), 'utf8')).toBe(userTrace);
    expect(sandboxes).toBe(0);
  });
});
