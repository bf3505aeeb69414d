import { mkdir, readdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createOfflineAnalyst } from '../../src/agent/index.ts';
import { deepAnalyze, type DeepAnalyzeOptions } from '../../src/deep/index.ts';
import { ConfigError } from '../../src/errors/index.ts';
import { useTempDirs } from '../support/temp-dirs.ts';

/**
 * Regression: deepAnalyze had no check of its own options. A misspelt one
 * passed into every sub-analysis's openThread, which refused it half-way
 * through the run ("openThread() has no option …"), after the folder was
 * claimed and the workspace profiled.
 */
const tempDirs = useTempDirs();

describe('deepAnalyze options', () => {
  it('a misspelt option is refused at once, naming deepAnalyze() and the right spelling; nothing is written', async () => {
    const root = await tempDirs.make('datalyst-deep-options-');
    const workspaceDir = path.join(root, 'ws');
    await mkdir(workspaceDir);
    await writeFile(path.join(workspaceDir, 'sales.csv'), 'region,revenue\nnorth,1\n');
    const outDir = path.join(root, 'deep');
    const options = {
      instruction: 'x',
      workspaceDir,
      model: createOfflineAnalyst(),
      outDir,
      maxSubAnalysis: 3,
      createSandbox: () => Promise.reject(new Error('no sandbox in this test')),
    } as unknown as DeepAnalyzeOptions;
    const error: unknown = await deepAnalyze(options).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain('deepAnalyze() has no option maxSubAnalysis');
    expect((error as Error).message).toContain('maxSubAnalyses');
    expect(await readdir(root)).toEqual(['ws']);
  });

  it('a deep option of the wrong kind is named', async () => {
    const error: unknown = await deepAnalyze({
      instruction: 'x',
      workspaceDir: os.tmpdir(),
      model: createOfflineAnalyst(),
      concurrency: 0,
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain(
      'The option concurrency of deepAnalyze() must be a whole number above 0',
    );
  });
});
