import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  rerunAnalysis,
  type LanguageModel,
  type ModelChunk,
  type ModelRequest,
} from '../../src/agent/index.ts';
import { deepAnalyze, readDeepRecord, type DeepRoles } from '../../src/deep/index.ts';
import { ConfigError, DatalystError } from '../../src/errors/index.ts';
import { createFakeSandbox, printed } from '../agent/support/fake-session.ts';
import { writeRecordedRun } from '../fixtures/traces/recorded-run.ts';
import { useTempDirs } from '../support/temp-dirs.ts';

/**
 * Regression: deepAnalyze checked that its run folder was new or empty, then
 * created it: two runs started in the same tick on one outDir both passed
 * the check and both wrote deep.json. The folder is now claimed by creating
 * deep.json exclusively: one run goes on, the other gets the check's refusal.
 */

const tempDirs = useTempDirs();

async function folders(): Promise<{ root: string; workspaceDir: string }> {
  const root = await tempDirs.make('datalyst-deep-race-');
  const workspaceDir = path.join(root, 'ws');
  await mkdir(workspaceDir);
  await writeFile(path.join(workspaceDir, 'sales.csv'), 'region,revenue\nnorth,1234\n');
  return { root, workspaceDir };
}

const subAnalyst: LanguageModel = {
  id: 'scripted-sub-analyst',
  contextWindowTokens: 32_000,
  async *stream(request: ModelRequest): AsyncIterable<ModelChunk> {
    const replies = request.messages.filter((message) => message.role === 'assistant').length;
    yield { type: 'text-delta', text: replies === 0 ? '<Code>print(1234)</Code>' : '<Answer>1234.</Answer>' };
    yield { type: 'finish', reason: 'stop' };
  },
};

function roles(question: string): DeepRoles {
  return {
    modelId: 'scripted',
    offline: false,
    scope: async (input) => ({
      brief: { question: input.question, questions: [{ question, tables: [] }], goodAnswer: '' },
    }),
    supervise: async () => [{ question, tables: [] }],
    subAnalystModel: () => subAnalyst,
    compress: async (input) =>
      input.executions.map((execution) => ({
        claim: 'It is 1,234.',
        outputs: [execution.outputId],
        figures: [],
      })),
    plan: async (input) => ({
      sections: [{ title: 'All', purpose: '', evidenceIds: input.evidence.map((item) => item.id) }],
      gaps: [],
    }),
    write: async (input) => `It is 1,234 [${input.evidence[0]?.id ?? ''}].`,
  };
}

function expectRunFolderRefusal(error: unknown): void {
  expect(error).toBeInstanceOf(ConfigError);
  if (!DatalystError.isInstance(error)) return;
  expect(error.code).toBe('CONFIG_INVALID');
  expect(error.message).toContain('already holds files');
  expect(error.fix).toContain('new or empty folder as outDir');
}

describe('two deep runs started at once on one run folder', () => {
  it.each([
    ['a new folder', false],
    ['an empty folder', true],
  ])(
    'on %s: exactly one goes on, the other is refused with the check error and opens no sandbox',
    async (_, made) => {
      const { root, workspaceDir } = await folders();
      const outDir = path.join(root, 'deep');
      if (made) await mkdir(outDir);
      const sandboxes = [
        createFakeSandbox({ run: () => printed('1234\n') }),
        createFakeSandbox({ run: () => printed('1234\n') }),
      ];
      const questions = ['First run?', 'Second run?'];
      // Both started in the same tick: both pass the emptiness check before either writes anything.
      const settled = await Promise.allSettled(
        sandboxes.map((sandbox, index) =>
          deepAnalyze({
            instruction: questions[index] ?? '',
            workspaceDir,
            outDir,
            model: subAnalyst,
            roles: roles(questions[index] ?? ''),
            createSandbox: sandbox.factory,
            concurrency: 1,
          }),
        ),
      );
      const fulfilled = settled.flatMap((result, index) => (result.status === 'fulfilled' ? [index] : []));
      const rejected = settled.flatMap((result) =>
        result.status === 'rejected' ? [result.reason as unknown] : [],
      );
      expect(fulfilled).toHaveLength(1);
      expect(rejected).toHaveLength(1);
      expectRunFolderRefusal(rejected[0]);
      const winner = fulfilled[0] ?? 0;
      expect(sandboxes[1 - winner]?.sessions).toHaveLength(0);
      // deep.json is the winner's alone, and nothing of the other run is in the folder.
      const record = await readDeepRecord(outDir);
      expect(record?.question).toBe(questions[winner]);
      expect(record?.termination.reason).toBe('answered');
      expect((await readdir(outDir)).sort()).toEqual(['deep.json', 'sub']);
      expect(await readdir(path.join(outDir, 'sub'))).toEqual(['S1']);
    },
  );
});

describe('two re-runs started at once on one run folder', () => {
  it('exactly one writes its trace: the trace is created exclusively, the other is refused', async () => {
    const { root, workspaceDir } = await folders();
    const oldRun = path.join(root, 'old-run');
    await writeRecordedRun(oldRun, workspaceDir);
    const outDir = path.join(root, 'rerun');
    const settled = await Promise.allSettled(
      [1, 2].map(() =>
        rerunAnalysis({
          runDir: oldRun,
          workspaceDir,
          outDir,
          createSandbox: () => Promise.reject(new Error('no sandbox in this test')),
        }),
      ),
    );
    expect(settled.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    const rejected = settled.flatMap((result) =>
      result.status === 'rejected' ? [result.reason as unknown] : [],
    );
    expect(rejected).toHaveLength(1);
    expect(rejected[0]).toBeInstanceOf(ConfigError);
    expect(String((rejected[0] as Error).message)).toContain('already holds a trace');
  });
});
