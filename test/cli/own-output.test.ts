import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findOwnOutput } from '../../src/cli/own-output.ts';
import { createFakeSandbox, printed } from '../agent/support/fake-session.ts';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../support/fake-openai-server.ts';
import { removeTemporaryDirs, runDatalyst, temporaryDir } from './support/cli-harness.ts';

const servers: FakeOpenAIServer[] = [];
afterEach(async () => {
  while (servers.length > 0) await servers.pop()?.close();
  await removeTemporaryDirs();
});

const traceStart = '{"type":"run-start","version":1,"runId":"x"}\n';

/** A project folder that has been analysed before: runs/ and a report moved elsewhere, plus a look-alike. */
async function analysedProject(): Promise<string> {
  const dir = await temporaryDir('datalyst-own-output-');
  await writeFile(path.join(dir, 'sales.csv'), 'region,revenue\nnorth,10\nsouth,20\n');
  await mkdir(path.join(dir, 'runs', '20250101-000000-sales', 'assets'), { recursive: true });
  await writeFile(path.join(dir, 'runs', '20250101-000000-sales', 'trace.jsonl'), traceStart);
  await writeFile(path.join(dir, 'runs', '20250101-000000-sales', 'trace.json'), '{"records":[]}');
  await writeFile(path.join(dir, 'runs', '20250101-000000-sales', 'assets', 'table.csv'), 'a\n1\n');
  await mkdir(path.join(dir, 'reports', 'q1'), { recursive: true });
  await writeFile(path.join(dir, 'reports', 'q1', 'trace.jsonl'), traceStart);
  await writeFile(path.join(dir, 'reports', 'q1', 'summary.csv'), 'a\n1\n');
  // Someone else's file of the same name: kept.
  await mkdir(path.join(dir, 'logs'), { recursive: true });
  await writeFile(path.join(dir, 'logs', 'trace.jsonl'), '{"span":"a"}\n');
  return dir;
}

describe('datalyst analyze . never reads its own output', () => {
  it('finds the runs folder and every folder holding a Datalyst trace, outermost only', async () => {
    const dir = await analysedProject();
    expect(
      await findOwnOutput(dir, { outDir: path.join(dir, 'runs', 'new'), runsDir: path.join(dir, 'runs') }),
    ).toEqual(['reports/q1', 'runs']);
    // An --out elsewhere: only the traces' folders.
    expect(await findOwnOutput(dir, { outDir: '/elsewhere/run', runsDir: null })).toEqual([
      'reports/q1',
      'runs/20250101-000000-sales',
    ]);
  });

  it('takes a folder named like `..runs` for one inside the workspace, not for one above it', async () => {
    const dir = await analysedProject();
    await mkdir(path.join(dir, '..runs', 'old'), { recursive: true });
    await writeFile(path.join(dir, '..runs', 'old', 'trace.jsonl'), traceStart);
    expect(
      await findOwnOutput(dir, {
        outDir: path.join(dir, '..runs', 'new'),
        runsDir: path.join(dir, '..runs'),
      }),
    ).toEqual(['..runs', 'reports/q1', 'runs/20250101-000000-sales']);
  });

  it('leaves them out of the check, the sandbox copy and the trace inputs, and says so', async () => {
    const dir = await analysedProject();
    const server = await startFakeOpenAIServer({
      script: [{ type: 'text', text: '<Answer>The total revenue is 30.</Answer>' }],
    });
    servers.push(server);
    const sandbox = createFakeSandbox({ run: () => printed('30\n') });
    const run = await runDatalyst(
      ['analyze', '.', 'Total revenue?', '--model', 'fake-model', '--base-url', server.baseUrl, '--json'],
      { cwd: dir, createSandbox: sandbox.factory },
    );
    expect(run.exitCode, run.stderr).toBe(0);
    const lines = run.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({
      type: 'workspace-check',
      excluded: ['reports/q1', 'runs'],
      dataFiles: ['logs/trace.jsonl', 'sales.csv'],
    });
    expect(sandbox.sessions[0]?.openedWith.excludeDirs).toEqual(['reports/q1', 'runs']);
    const runStart = JSON.parse(
      (
        await readFile(path.join(String((lines.at(-1) as { outDir: string }).outDir), 'trace.jsonl'), 'utf8')
      ).split('\n')[0] ?? '',
    ) as { workspace: { files: { path: string }[] } };
    expect(runStart.workspace.files.map((file) => file.path)).toEqual(['logs/trace.jsonl', 'sales.csv']);
    expect(run.stderr).not.toContain('left out'); // --json: people's lines are quiet
  });
});

describe('one set of run options for analyze, chat and --continue', () => {
  it('analyze --continue passes the runtime and the left-out run folders on, as analyze does', async () => {
    const dir = await analysedProject();
    const server = await startFakeOpenAIServer({
      script: [
        { type: 'text', text: '<Answer>The total revenue is 30.</Answer>' },
        { type: 'text', text: '<Answer>Still 30.</Answer>' },
      ],
    });
    servers.push(server);
    const sandbox = createFakeSandbox({ run: () => printed('30\n') });
    const model = ['--model', 'fake-model', '--base-url', server.baseUrl, '--runtime', 'runsc'];
    const first = await runDatalyst(['analyze', '.', 'Total revenue?', ...model, '--json'], {
      cwd: dir,
      createSandbox: sandbox.factory,
    });
    expect(first.exitCode, first.stderr).toBe(0);
    const outDir = String(
      (JSON.parse(first.stdout.trimEnd().split('\n').at(-1) ?? '{}') as { outDir: string }).outDir,
    );
    const next = await runDatalyst(['analyze', '--continue', outDir, 'And again?', ...model, '--json'], {
      cwd: dir,
      createSandbox: sandbox.factory,
    });
    expect(next.exitCode, next.stderr).toBe(0);
    expect(sandbox.sessions).toHaveLength(2);
    for (const session of sandbox.sessions) {
      expect(session.openedWith.runtime).toBe('runsc');
      expect(session.openedWith.excludeDirs).toEqual(['reports/q1', 'runs']);
    }
  });
});
