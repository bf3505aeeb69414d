import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { rerunAnalysis, type RerunOptions, type RerunResult } from '../../src/index.ts';
import { SandboxFailureError } from '../../src/errors/index.ts';
import { readTrace } from '../../src/trace/reader.ts';
import { makeSyntheticTrace } from '../fixtures/traces/synthetic-trace.ts';
import { createFakeSandbox, failedWith, printed, type FakeSessionOptions } from './support/fake-session.ts';
import { descriptorsOn } from '../support/open-descriptors.ts';

/**
 * A re-run's result says what error ended it, as `analyze()`'s does: `error`
 * for a sandbox or model failure, absent for a named ending (a cell that
 * fails on the new data, a cancel). After a bug in Datalyst it rejects, and
 * its trace is closed as it stood.
 */
let root = '';
afterEach(async () => {
  if (root !== '') await rm(root, { recursive: true, force: true });
  root = '';
});

/** An earlier run (two cells, an answer) and a new workspace with its files. */
async function recordedRun(): Promise<{ runDir: string; workspaceDir: string; outDir: string }> {
  root = await mkdtemp(path.join(tmpdir(), 'datalyst-rerun-error-'));
  const runDir = path.join(root, 'old-run');
  const workspaceDir = path.join(root, 'data');
  await mkdir(runDir);
  await mkdir(workspaceDir);
  const trace = makeSyntheticTrace({ seed: 7, rounds: 2, charts: 0, figures: 0 });
  await writeFile(path.join(runDir, 'trace.json'), JSON.stringify(trace));
  const start = trace.records[0];
  if (start?.type !== 'run-start') throw new Error('the synthetic trace starts with run-start');
  for (const file of start.workspace.files) await writeFile(path.join(workspaceDir, file.path), 'a\n1\n');
  return { runDir, workspaceDir, outDir: path.join(root, 'new-run') };
}

async function rerunWith(
  session: FakeSessionOptions,
  options: Partial<RerunOptions> = {},
): Promise<RerunResult> {
  const run = await recordedRun();
  return rerunAnalysis({ ...run, createSandbox: createFakeSandbox(session).factory, ...options });
}

describe('the result of rerunAnalysis', () => {
  it('has no error when every cell ran and the answer was carried over', async () => {
    const result = await rerunWith({ run: () => printed('total 3030\n') });
    expect(result.termination.reason).toBe('answered');
    expect(result.error).toBeUndefined();
  });

  it('carries the sandbox error behind a sandbox-failure ending, as its error event did', async () => {
    const broken = new SandboxFailureError('The container is gone.', {
      cause: new Error('no such container'),
    });
    const errors: unknown[] = [];
    const result = await rerunWith(
      { failOnCell: { index: 1, error: broken } },
      { onEvent: (event) => event.type === 'error' && errors.push(event.error) },
    );
    expect(result.termination.reason).toBe('sandbox-failure');
    expect(errors).toEqual([broken]);
    expect(result.error).toEqual({
      code: 'SANDBOX_FAILURE',
      message: 'The container is gone.',
      fix: broken.fix,
      fault: 'system',
      cause: 'no such container',
    });
  });

  it("calls a sandbox factory's own failure a sandbox failure (code SANDBOX_FAILURE), not a bug in Datalyst", async () => {
    const run = await recordedRun();
    const result = await rerunAnalysis({
      ...run,
      createSandbox: () => Promise.reject(new Error('connect ECONNREFUSED /var/run/docker.sock')),
    });
    expect(result.termination.reason).toBe('sandbox-failure');
    expect(result.error).toMatchObject({
      code: 'SANDBOX_FAILURE',
      cause: 'connect ECONNREFUSED /var/run/docker.sock',
    });
  });

  it('has no error for rerun-cell-failed: the failed cell is a result (failedCell), as a failed cell is in analyze', async () => {
    const result = await rerunWith({
      run: (_code, index) => (index === 0 ? failedWith('KeyError', "'region'") : printed('total 3030\n')),
    });
    expect(result.termination.reason).toBe('rerun-cell-failed');
    expect(result.failedCell).toMatchObject({ status: 'error', detail: "KeyError: 'region'" });
    expect(result.error).toBeUndefined();
  });

  it('has no error when cancelled', async () => {
    const controller = new AbortController();
    const result = await rerunWith(
      {
        run: (_code, index) => {
          if (index === 0) controller.abort();
          return printed('total 3030\n');
        },
      },
      { signal: controller.signal },
    );
    expect(result.termination.reason).toBe('cancelled');
    expect(result.error).toBeUndefined();
  });
});

describe('a re-run stopped by a bug in Datalyst', () => {
  it.runIf(process.platform === 'linux')(
    'rejects with INTERNAL_ERROR and leaves its trace closed, as written, with no run-end',
    async () => {
      const run = await recordedRun();
      const sandbox = createFakeSandbox({
        // A session's errors are DatalystErrors; anything else thrown is Datalyst's bug.
        failOnCell: {
          index: 1,
          error: new TypeError("Cannot read properties of undefined (reading 'text')"),
        },
      });
      await expect(rerunAnalysis({ ...run, createSandbox: sandbox.factory })).rejects.toMatchObject({
        code: 'INTERNAL_ERROR',
        fault: 'internal',
      });
      const tracePath = path.join(run.outDir, 'trace.jsonl');
      expect(descriptorsOn(tracePath)).toBe(0);
      expect(sandbox.sessions[0]?.closed).toBe(true);
      const trace = await readTrace(tracePath);
      expect(trace.partial).toBe(true);
      expect(trace.records.map((record) => record.type)).toContain('execution');
      expect(trace.records.map((record) => record.type)).not.toContain('run-end');
    },
  );
});
