import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { rerunAnalysis } from '../../src/agent/index.ts';
import { makeSyntheticTrace } from '../fixtures/traces/synthetic-trace.ts';

/**
 * A new run folder inside the earlier run is refused, but "inside" was
 * "the relative path does not start with `..`": a folder named `..new` in
 * the earlier run passed as outside, and the re-run wrote into the run it
 * must never change.
 */
let root = '';
afterEach(async () => {
  if (root !== '') await rm(root, { recursive: true, force: true });
});

describe('a re-run into a folder of the earlier run whose name starts with two dots', () => {
  it('is refused before anything is written', async () => {
    root = await mkdtemp(join(tmpdir(), 'datalyst-rerun-inside-'));
    const oldRun = join(root, 'old-run');
    const workspace = join(root, 'data');
    await mkdir(oldRun);
    await mkdir(workspace);
    const trace = makeSyntheticTrace({ seed: 5, rounds: 1, charts: 0, figures: 0 });
    await writeFile(join(oldRun, 'trace.json'), JSON.stringify(trace));
    const start = trace.records[0];
    if (start?.type !== 'run-start') throw new Error('the synthetic trace starts with run-start');
    for (const file of start.workspace.files) await writeFile(join(workspace, file.path), 'a\n1\n');
    let sandboxes = 0;
    await expect(
      rerunAnalysis({
        runDir: oldRun,
        workspaceDir: workspace,
        outDir: join(oldRun, '..new'),
        createSandbox: () => {
          sandboxes += 1;
          throw new Error('no sandbox in this test');
        },
      }),
    ).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
    expect(sandboxes).toBe(0);
    expect(await readdir(oldRun)).toEqual(['trace.json']);
  });
});
