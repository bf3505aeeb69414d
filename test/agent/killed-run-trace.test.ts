import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, it } from 'vitest';
import { readTrace } from '../../src/trace/reader.ts';
import { startFakeOpenAIServer } from '../support/fake-openai-server.ts';
import { cleanUpHarness, makeWorkspace } from './support/loop-harness.ts';

afterEach(cleanUpHarness);

const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'support', 'killable-run.ts');
const codeTurn = (code: string) => ({
  type: 'text' as const,
  text: `<Analyze>Step.</Analyze><Code>${code}</Code>`,
});

it('a run killed with SIGKILL leaves a readable partial trace with everything up to the kill', async () => {
  const server = await startFakeOpenAIServer({
    script: [codeTurn("print('first')"), codeTurn('wait_forever()')],
  });
  const workspaceDir = await makeWorkspace();
  const runsDir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-killed-'));
  const outDir = path.join(runsDir, 'run');
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', script], {
      env: {
        ...process.env,
        DATALYST_TEST_BASE_URL: server.baseUrl,
        DATALYST_TEST_OUT_DIR: outDir,
        DATALYST_TEST_WORKSPACE: workspaceDir,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_code, signal) => resolve(signal)),
    );
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (data: Buffer) => {
        if (data.toString().includes('second-cell-running')) resolve();
      });
      child.on('exit', () => reject(new Error('the run ended before it could be killed')));
    });
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');

    const trace = await readTrace(path.join(outDir, 'trace.jsonl'));
    expect(trace.partial).toBe(true);
    expect(trace.records.map((record) => record.type)).toEqual([
      'run-start',
      'workspace-profile',
      'turn-start',
      'model-turn',
      'step',
      'step',
      'execution',
      'model-turn',
      'step',
      'step',
    ]);
    expect(existsSync(path.join(outDir, 'trace.json'))).toBe(false);
  } finally {
    await server.close();
    await rm(runsDir, { recursive: true, force: true });
  }
});
