import { readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  analyze,
  createOfflineAnalyst,
  openThread,
  resumeThread,
  streamAnalysis,
} from '../../src/agent/index.ts';
import { ConfigError, DatalystError } from '../../src/errors/index.ts';
import { createFakeSandbox, printed, testProfile } from './support/fake-session.ts';
import { useTempDirs } from '../support/temp-dirs.ts';

/**
 * Regression: a misspelt option was ignored and the run went on with the
 * default (`maxRound: 3`, `idleTimeout: 5`, `sandbox.limits.memoryMB`). It is
 * a ConfigError naming the option and the right spelling, before any
 * sandbox or run folder.
 */

const tempDirs = useTempDirs();

async function folders(): Promise<{ root: string; workspaceDir: string; outDir: string }> {
  const root = await tempDirs.make('datalyst-unknown-option-');
  await writeFile(path.join(root, 'sales.csv'), 'region,revenue\nnorth,1234\n');
  return { root, workspaceDir: root, outDir: path.join(root, 'run') };
}

async function refusal(run: () => Promise<unknown>): Promise<DatalystError> {
  const error: unknown = await run().then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ConfigError);
  if (!DatalystError.isInstance(error)) throw new Error('not a DatalystError');
  expect(error.code).toBe('CONFIG_INVALID');
  expect(error.cause).toBeDefined();
  return error;
}

describe('an option that does not exist', () => {
  it('analyze({ maxRound }) names it and maxRounds; no sandbox, no run folder', async () => {
    const { workspaceDir, outDir } = await folders();
    const sandbox = createFakeSandbox({ run: () => printed('1\n'), profile: testProfile });
    const options = {
      instruction: 'x',
      workspaceDir,
      model: createOfflineAnalyst(),
      outDir,
      createSandbox: sandbox.factory,
      maxRound: 3,
    };
    const error = await refusal(() => analyze(options));
    expect(error.message).toBe('analyze() has no option maxRound (did you mean maxRounds?).');
    expect(error.fix).toMatch(/^Write maxRounds instead of maxRound/);
    expect(sandbox.sessions).toHaveLength(0);
    expect(await readdir(workspaceDir)).toEqual(['sales.csv']);
    const streamed = await refusal(async () => {
      for await (const _event of streamAnalysis(options)) break;
    });
    expect(streamed.message).toContain('streamAnalysis() has no option maxRound');
  });

  it('openThread({ idleTimeout }) names idleTimeoutMs', async () => {
    const { workspaceDir, outDir } = await folders();
    const error = await refusal(() =>
      openThread({ workspaceDir, model: createOfflineAnalyst(), outDir, ...{ idleTimeout: 5 } }),
    );
    expect(error.message).toBe('openThread() has no option idleTimeout (did you mean idleTimeoutMs?).');
    expect(await readdir(workspaceDir)).toEqual(['sales.csv']);
  });

  it('sandbox.limits.memoryMB names memoryMb; a sandbox option and resumeThread are checked too', async () => {
    const { workspaceDir, outDir } = await folders();
    const model = createOfflineAnalyst();
    const limits = await refusal(() =>
      openThread({ workspaceDir, model, outDir, sandbox: { limits: { memoryMB: 512 } as never } }),
    );
    expect(limits.message).toBe(
      'The option sandbox.limits of openThread() has no option memoryMB (did you mean memoryMb?).',
    );
    const sandbox = await refusal(() =>
      openThread({ workspaceDir, model, outDir, sandbox: { backnd: 'docker' } as never }),
    );
    expect(sandbox.message).toContain('has no option backnd (did you mean backend?)');
    const resumed = await refusal(() => resumeThread(outDir, { model, ...{ maxRound: 2 } }));
    expect(resumed.message).toBe('resumeThread() has no option maxRound (did you mean maxRounds?).');
  });

  it('one with no close name lists the options', async () => {
    const { workspaceDir, outDir } = await folders();
    const error = await refusal(() =>
      openThread({ workspaceDir, model: createOfflineAnalyst(), outDir, ...{ colour: 'blue' } }),
    );
    expect(error.message).toBe('openThread() has no option colour.');
    expect(error.fix).toContain('Leave out colour; the options are workspaceDir, model,');
  });
});
