import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { analyze, streamAnalysis } from '../../src/agent/analyze.ts';
import type { AnalyzeOptions } from '../../src/agent/analyze-options.ts';
import { createOfflineAnalyst } from '../../src/agent/offline-analyst/index.ts';
import { createOpenAIChatModel } from '../../src/agent/openai-chat-model.ts';
import { openThread } from '../../src/agent/thread/thread.ts';
import { resumeThread } from '../../src/agent/thread/resume-thread.ts';
import { DatalystError, ImageMissingError } from '../../src/errors/index.ts';
import { startFakeOpenAIServer } from '../support/fake-openai-server.ts';
import { createFakeSandbox } from './support/fake-session.ts';
import { cleanUpHarness, makeRunsDir, makeWorkspace, runLoop } from './support/loop-harness.ts';

afterEach(cleanUpHarness);

/** Options a JavaScript caller (or a cast) can pass, which the types would refuse. */
async function baseOptions() {
  const sandbox = createFakeSandbox({});
  const runDir = path.join(await makeRunsDir(), 'run');
  const options: AnalyzeOptions = {
    instruction: 'Which region sells more?',
    workspaceDir: await makeWorkspace(),
    model: createOfflineAnalyst(),
    createSandbox: sandbox.factory,
    outDir: runDir,
  };
  return { options, sandbox, runDir };
}

async function rejection(promise: Promise<unknown>): Promise<DatalystError> {
  const error: unknown = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  if (!DatalystError.isInstance(error)) throw new Error(`expected a DatalystError, got ${String(error)}`);
  return error;
}

describe('options a first-time caller gets wrong are a ConfigError before anything runs', () => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['maxRounds: -1', { maxRounds: -1 }, /maxRounds .*whole number above 0; got -1\./],
    ['maxRounds: "x"', { maxRounds: 'x' }, /maxRounds .*whole number above 0; got "x"\./],
    [
      "profile: 'gpt'",
      { profile: 'gpt' },
      /profile .*'chat', 'deepanalyze' or a ModelProfile object; got "gpt"\./,
    ],
    [
      'sandbox.limits.cellTimeoutMs: 0',
      { sandbox: { limits: { cellTimeoutMs: 0 } } },
      /sandbox\.limits\.cellTimeoutMs .*a number above 0; got 0\./,
    ],
    [
      'model: undefined',
      { model: undefined },
      /The option model of analyze\(\) must be a LanguageModel.*got nothing\./,
    ],
  ];

  for (const [name, extra, message] of cases) {
    it(`analyze({ ${name} }) rejects with CONFIG_INVALID naming the option; no sandbox, no run folder`, async () => {
      const { options, sandbox, runDir } = await baseOptions();
      const error = await rejection(analyze({ ...options, ...extra } as AnalyzeOptions));
      expect(error.code).toBe('CONFIG_INVALID');
      expect(error.fault).toBe('user');
      expect(error.message).toMatch(message);
      expect(error.fix).toMatch(/^Pass /);
      expect(error.cause).toBeDefined();
      expect(sandbox.sessions).toHaveLength(0);
      expect(existsSync(runDir)).toBe(false);
    });
  }

  it('streamAnalysis, openThread and resumeThread check the same options', async () => {
    const { options, runDir } = await baseOptions();
    const stream = streamAnalysis({ ...options, maxRounds: -1 });
    expect((await rejection(stream.next())).message).toMatch(/maxRounds of streamAnalysis\(\)/);
    const { instruction: _instruction, ...threadOptions } = options;
    const opened = await rejection(openThread({ ...threadOptions, idleTimeoutMs: 0 }));
    expect(opened.message).toMatch(/idleTimeoutMs of openThread\(\) must be a number above 0; got 0/);
    const noFiles = await rejection(openThread({ ...threadOptions, whenNoFiles: 'ask' as 'stop' }));
    expect(noFiles.message).toMatch(/whenNoFiles of openThread\(\) must be 'stop' or 'ask-model'; got "ask"/);
    const resumed = await rejection(resumeThread(runDir, { ...threadOptions, profile: 'gpt' as 'chat' }));
    expect(resumed.code).toBe('CONFIG_INVALID');
    expect(resumed.message).toMatch(/profile of resumeThread\(\)/);
    expect(existsSync(runDir)).toBe(false);
  });
});

describe('a bug in Datalyst is not a sandbox failure', () => {
  it('a TypeError in the loop rejects analyze() with INTERNAL_ERROR (fault internal), not termination sandbox-failure', async () => {
    const { options } = await baseOptions();
    const server = await startFakeOpenAIServer({
      script: [{ type: 'text', text: "<Code>print('x')</Code>" }],
    });
    try {
      // The sandbox maps Docker's failures to DatalystErrors: a TypeError out of it is Datalyst's own bug.
      const broken = createFakeSandbox({
        run: () => {
          throw new TypeError("Cannot read properties of undefined (reading 'length')");
        },
      });
      const error = await rejection(
        analyze({
          ...options,
          model: createOpenAIChatModel({
            baseUrl: server.baseUrl,
            model: 'fake-model',
            retry: { maxRetries: 0, initialDelayMs: 5, maxDelayMs: 5 },
          }),
          createSandbox: broken.factory,
        }),
      );
      expect(error.code).toBe('INTERNAL_ERROR');
      expect(error.fault).toBe('internal');
      expect(error.cause).toBeInstanceOf(TypeError);
      expect(broken.sessions[0]?.closed).toBe(true);
      const trace = await readFile(path.join(options.outDir ?? '', 'trace.jsonl'), 'utf8');
      expect(trace).toContain('"type":"run-start"');
      expect(trace).toContain('Datalyst failed (a bug)');
      expect(trace).not.toContain('sandbox-failure');
    } finally {
      await server.close();
    }
  });

  it('a caller’s sandbox factory that throws a plain Error is still a sandbox failure', async () => {
    const { options } = await baseOptions();
    const result = await analyze({
      ...options,
      createSandbox: () => Promise.reject(new Error('no engine here')),
    });
    expect(result.termination.reason).toBe('sandbox-failure');
    expect(result.error).toMatchObject({ code: 'SANDBOX_FAILURE', cause: 'no engine here' });
  });
});

describe('the result of a run ended by an error carries that error', () => {
  it('analyze() resolves with error { code, message, fix, fault, cause } (IMAGE_MISSING)', async () => {
    const cause = new Error('No such image: datalyst/python-runner:doesnotexist');
    const run = await runLoop({
      analyze: {
        createSandbox: () =>
          Promise.reject(new ImageMissingError('datalyst/python-runner:doesnotexist', cause)),
      },
    });
    expect(run.result.termination.reason).toBe('sandbox-failure');
    expect(run.result.error).toEqual({
      code: 'IMAGE_MISSING',
      message: 'The runner image datalyst/python-runner:doesnotexist is not built.',
      fix: expect.stringContaining('datalyst setup') as unknown as string,
      fault: 'system',
      cause: 'No such image: datalyst/python-runner:doesnotexist',
    });
    // JSON-safe: it survives the CLI's --json lines as it is.
    expect(JSON.parse(JSON.stringify(run.result.error))).toEqual(run.result.error);
    // A library user has no `npm run demo` (a script of the repository), and setup builds only Datalyst's image.
    expect(run.result.error?.fix).not.toContain('npm run demo');
    expect(run.result.error?.fix).toContain('An image of your own');
  });

  it('an answered run has no error', async () => {
    const run = await runLoop({
      server: { script: [{ type: 'text', text: '<Answer>South.</Answer>' }] },
    });
    expect(run.result.termination.reason).toBe('answered');
    expect(run.result.error).toBeUndefined();
  });
});
