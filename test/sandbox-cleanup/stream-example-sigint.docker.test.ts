import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Docker from 'dockerode';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { containerLabels } from '../../src/sandbox/index.ts';

/**
 * The README's streaming example (examples/stream-analysis.ts) cancels on
 * Ctrl-C with `process.once('SIGINT', …)`. Regression: the library's exit
 * cleanup did not count a `once` listener (it removes itself before it runs),
 * removed the sandbox and killed the process, leaving a run folder with no
 * run-end and no report.
 */

const example = fileURLToPath(new URL('../../examples/stream-analysis.ts', import.meta.url));
// The child runs in a temporary folder (its runs/ goes there), where `--import tsx` would not resolve.
const tsxLoader = new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;
const workspace = fileURLToPath(new URL('../../workspace-examples/student-loan', import.meta.url));
const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('the streaming example on Ctrl-C', () => {
  it('ends the run cancelled with its report, and leaves no container', async () => {
    const cwd = await mkdtemp(path.join(tmpdir(), 'datalyst-sigint-example-'));
    cleanups.push(() => rm(cwd, { recursive: true, force: true }));
    const child = execa(process.execPath, ['--import', tsxLoader, example, workspace], {
      cwd,
      buffer: false,
      reject: false,
      env: { DATALYST_BASE_URL: '', DATALYST_MODEL: '' },
    });
    cleanups.push(() => {
      child.kill('SIGKILL');
      return child;
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    let exited = false;
    void child.then(() => (exited = true));
    // Mid-run: the first cell has run in the sandbox.
    await expect
      .poll(() => (exited ? `exited early: ${stderr}` : stdout), { timeout: 120_000, interval: 100 })
      .toMatch(/\[\w+\] \w+ in \d+ ms/);
    child.kill('SIGINT');
    const result = await child;
    expect(stderr).not.toContain('removing');
    expect(result.signal).toBeUndefined();
    expect(result.exitCode).toBe(0);
    expect(stdout).toMatch(/\ncancelled; report: .*report\.html/);
    const [runId] = await readdir(path.join(cwd, 'runs'));
    const files = await readdir(path.join(cwd, 'runs', runId ?? ''));
    expect(files).toEqual(expect.arrayContaining(['trace.json', 'report.html', 'report.md']));
    const left = await new Docker().listContainers({
      all: true,
      filters: {
        label: [
          `${containerLabels.ownerPid}=${child.pid ?? -1}`,
          `${containerLabels.ownerHost}=${hostname()}`,
        ],
      },
    });
    expect(left).toEqual([]);
  });
});
