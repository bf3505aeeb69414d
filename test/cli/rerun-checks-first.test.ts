import { mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SandboxUnavailableError } from '../../src/errors/index.ts';
import { makeSyntheticTrace } from '../fixtures/traces/synthetic-trace.ts';
import { removeTemporaryDirs, runDatalyst, temporaryDir } from './support/cli-harness.ts';

afterEach(removeTemporaryDirs);

/**
 * `datalyst rerun` names a mistyped argument before it looks at Docker: the
 * run folder, the new workspace's files and the output folder are checked
 * first. Here Docker is "down" (the sandbox preparer rejects, and counts its
 * calls), so a check made after it would say so instead of naming the mistake.
 */
async function setUp() {
  const root = await temporaryDir('datalyst-rerun-checks-');
  const runDir = path.join(root, 'old-run');
  const workspaceDir = path.join(root, 'data');
  await mkdir(runDir);
  await mkdir(workspaceDir);
  const trace = makeSyntheticTrace({ seed: 3, rounds: 1, charts: 0, figures: 0 });
  await writeFile(path.join(runDir, 'trace.json'), JSON.stringify(trace));
  const start = trace.records[0];
  if (start?.type !== 'run-start') throw new Error('the synthetic trace starts with run-start');
  const files = start.workspace.files.map((file) => file.path);
  let prepared = 0;
  const rerun = (args: readonly string[]) =>
    runDatalyst(['rerun', ...args], {
      cwd: root,
      prepareSandbox: () => {
        prepared += 1;
        return Promise.reject(
          new SandboxUnavailableError('The Docker engine is not running.', { fix: 'Start it.' }),
        );
      },
    });
  return { root, runDir, workspaceDir, files, rerun, preparedCount: () => prepared };
}

describe('datalyst rerun checks the arguments before Docker', () => {
  it('names a run folder that does not exist as missing (not "holds no trace.jsonl"), before Docker', async () => {
    const { root, workspaceDir, files, rerun, preparedCount } = await setUp();
    for (const file of files) await writeFile(path.join(workspaceDir, file), 'a\n1\n');
    const out = path.join(root, 'new-run');
    const run = await rerun([path.join(root, 'no-such-run'), workspaceDir, '-o', out]);
    expect(run.exitCode, run.stderr).toBe(2);
    expect(run.stderr).toContain(`The run folder ${path.join(root, 'no-such-run')} does not exist.`);
    expect(run.stderr).not.toContain('trace.jsonl or trace.json');
    expect(preparedCount()).toBe(0);
    await expect(stat(out)).rejects.toThrow(); // the folder made for the run went again
  });

  it('names a missing data file before Docker', async () => {
    const { root, runDir, workspaceDir, files, rerun, preparedCount } = await setUp();
    const [first = '', ...others] = files;
    for (const file of others) await writeFile(path.join(workspaceDir, file), 'a\n1\n');
    const run = await rerun([runDir, workspaceDir, '-o', path.join(root, 'new-run')]);
    expect(run.exitCode, run.stderr).toBe(2);
    expect(run.stderr).toContain('WORKSPACE_INVALID');
    expect(run.stderr).toContain(`has no ${first}`);
    expect(preparedCount()).toBe(0);
  });

  it('refuses an output folder that holds files before Docker', async () => {
    const { root, runDir, workspaceDir, files, rerun, preparedCount } = await setUp();
    for (const file of files) await writeFile(path.join(workspaceDir, file), 'a\n1\n');
    const out = path.join(root, 'taken');
    await mkdir(out);
    await writeFile(path.join(out, 'keep.txt'), 'mine\n');
    const run = await rerun([runDir, workspaceDir, '-o', out]);
    expect(run.exitCode, run.stderr).toBe(2);
    expect(run.stderr).toContain('already holds files');
    expect(preparedCount()).toBe(0);
  });

  it('asks Docker once the arguments are right, and leaves no run folder when it is down (exit 4)', async () => {
    const { root, runDir, workspaceDir, files, rerun, preparedCount } = await setUp();
    for (const file of files) await writeFile(path.join(workspaceDir, file), 'a\n1\n');
    const out = path.join(root, 'runs', 'new-run');
    const run = await rerun([runDir, workspaceDir, '-o', out]);
    expect(run.exitCode, run.stderr).toBe(4);
    expect(run.stderr).toContain('SANDBOX_UNAVAILABLE');
    expect(preparedCount()).toBe(1);
    // Neither the run folder nor the runs/ folder made for it is left behind.
    await expect(stat(path.join(root, 'runs'))).rejects.toThrow();
  });
});
