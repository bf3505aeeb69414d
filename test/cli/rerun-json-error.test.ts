import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { SandboxFailureError } from '../../src/errors/index.ts';
import { makeSyntheticTrace } from '../fixtures/traces/synthetic-trace.ts';
import { shippedSchemaValidator } from '../support/json-schema-validator.ts';
import { removeTemporaryDirs, runDatalyst, temporaryDir } from './support/cli-harness.ts';

afterEach(removeTemporaryDirs);

it('`datalyst rerun --json`: the run-end line of a sandbox failure carries its error, as analyze --json does, and matches the shipped schema', async () => {
  const root = await temporaryDir('datalyst-rerun-json-');
  const runDir = path.join(root, 'old-run');
  const workspaceDir = path.join(root, 'data');
  await mkdir(runDir);
  await mkdir(workspaceDir);
  const trace = makeSyntheticTrace({ seed: 7, rounds: 2, charts: 0, figures: 0 });
  await writeFile(path.join(runDir, 'trace.json'), JSON.stringify(trace));
  const start = trace.records[0];
  if (start?.type !== 'run-start') throw new Error('the synthetic trace starts with run-start');
  for (const file of start.workspace.files) await writeFile(path.join(workspaceDir, file.path), 'a\n1\n');

  const run = await runDatalyst(
    ['rerun', runDir, workspaceDir, '--json', '-o', path.join(root, 'new-run'), '--format', 'md'],
    {
      cwd: root,
      createSandbox: () =>
        Promise.reject(
          new SandboxFailureError('The container is gone.', { cause: new Error('no such container') }),
        ),
    },
  );
  expect(run.exitCode).toBe(4);
  const lines = run.stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as { type: string });
  const runEnd = lines.find((line) => line.type === 'run-end');
  expect(runEnd).toMatchObject({
    result: {
      termination: { reason: 'sandbox-failure' },
      error: { code: 'SANDBOX_FAILURE', fault: 'system', cause: 'no such container' },
    },
  });
  expect(shippedSchemaValidator('json-lines.schema.json')(runEnd)).toEqual([]);
});
