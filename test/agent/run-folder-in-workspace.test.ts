import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  analyze,
  createOfflineAnalyst,
  rerunAnalysis,
  resumeThread,
  type LanguageModel,
  type ModelChunk,
  type ModelRequest,
} from '../../src/agent/index.ts';
import { excludedDirsOfRun } from '../../src/agent/thread/run-folder.ts';
import { deepAnalyze, type DeepRoles } from '../../src/deep/index.ts';
import type { SandboxOptions } from '../../src/sandbox/index.ts';
import { readTrace } from '../../src/trace/reader.ts';
import { createFakeSandbox, printed } from './support/fake-session.ts';
import { writeRecordedRun } from '../fixtures/traces/recorded-run.ts';
import { useTempDirs } from '../support/temp-dirs.ts';

/**
 * Regression: a run folder (outDir) inside the workspace was listed as data
 * by the library (the CLI left its own output out): its trace and artifacts
 * were hashed, copied into the sandbox, profiled, and a resumed thread saw the
 * workspace changed. The real sandbox's side is in the .docker test beside this.
 */

const tempDirs = useTempDirs();

async function workspace(): Promise<{ root: string; workspaceDir: string }> {
  const root = await tempDirs.make('datalyst-run-inside-');
  const workspaceDir = path.join(root, 'ws');
  await mkdir(workspaceDir);
  await writeFile(path.join(workspaceDir, 'sales.csv'), 'region,revenue\nnorth,1234\n');
  return { root, workspaceDir };
}

async function inputPaths(runDir: string): Promise<string[]> {
  const start = (await readTrace(path.join(runDir, 'trace.jsonl'))).records[0];
  if (start?.type !== 'run-start') throw new Error('no run-start');
  return start.workspace.files.map((file) => file.path);
}

describe('excludedDirsOfRun', () => {
  it('adds a run folder inside the workspace, compared by real paths', async () => {
    const { root, workspaceDir } = await workspace();
    const ws = workspaceDir;
    expect(await excludedDirsOfRun(ws, path.join(ws, 'run'))).toEqual(['run']);
    // Not made yet, several levels down; a folder named like `..run` is inside too.
    expect(await excludedDirsOfRun(ws, path.join(ws, 'runs', 'a', 'b'))).toEqual(['runs/a/b']);
    expect(await excludedDirsOfRun(ws, path.join(ws, '..run'))).toEqual(['..run']);
    // Relative: resolved against the working directory.
    expect(await excludedDirsOfRun(ws, path.relative(process.cwd(), path.join(ws, 'run')))).toEqual(['run']);
    // A link to the workspace, on either side.
    await symlink(ws, path.join(root, 'link'));
    expect(await excludedDirsOfRun(path.join(root, 'link'), path.join(ws, 'run'))).toEqual(['run']);
    expect(await excludedDirsOfRun(ws, path.join(root, 'link', 'run'))).toEqual(['run']);
    // A link inside the workspace to a folder elsewhere: the run folder is not in the workspace (the listing never follows links).
    await mkdir(path.join(root, 'elsewhere'));
    await symlink(path.join(root, 'elsewhere'), path.join(ws, 'out'));
    expect(await excludedDirsOfRun(ws, path.join(ws, 'out', 'run'))).toEqual([]);
    // Outside, or the workspace itself: nothing to leave out.
    expect(await excludedDirsOfRun(ws, path.join(root, 'run'))).toEqual([]);
    expect(await excludedDirsOfRun(ws, ws)).toEqual([]);
    // The caller's folders are kept; one already covering the run folder is not repeated.
    expect(await excludedDirsOfRun(ws, path.join(ws, 'run'), ['old'])).toEqual(['old', 'run']);
    expect(await excludedDirsOfRun(ws, path.join(ws, 'runs', 'x'), ['runs'])).toEqual(['runs']);
  });
});

describe('a library run whose outDir lies inside the workspace', () => {
  it('analyze() leaves it out of the sandbox, and a resumed thread sees the same workspace', async () => {
    const { workspaceDir } = await workspace();
    const outDir = path.join(workspaceDir, 'run');
    const sandbox = createFakeSandbox({ run: () => printed('1234\n') });
    const result = await analyze({
      instruction: 'What is the revenue?',
      workspaceDir,
      outDir,
      model: createOfflineAnalyst(),
      createSandbox: sandbox.factory,
      sandbox: { excludeDirs: ['old'] },
    });
    expect(result.outDir).toBe(outDir);
    expect(sandbox.sessions.map((session) => session.openedWith.excludeDirs)).toEqual([['old', 'run']]);
    expect(await inputPaths(outDir)).toEqual(['sales.csv']);
    // A report written beside the trace, then resumed: the run folder's files are not inputs that came.
    await writeFile(path.join(outDir, 'report.html'), '<p>report</p>');
    const resumed = await resumeThread(outDir, {
      model: createOfflineAnalyst(),
      createSandbox: sandbox.factory,
    });
    // The workspace is compared with the trace's inputs before a question.
    await resumed.ask('And by region?').result;
    await resumed.close();
    const records = (await readTrace(path.join(outDir, 'trace.jsonl'))).records;
    const notices = records.flatMap((record) => (record.type === 'notice' ? [record.text] : []));
    expect(notices.filter((text) => text.includes('workspace changed'))).toEqual([]);
    expect(records.filter((record) => record.type === 'workspace-change')).toEqual([]);
  });

  it('an outDir outside the workspace leaves the options as they were', async () => {
    const { root, workspaceDir } = await workspace();
    const sandbox = createFakeSandbox({ run: () => printed('1234\n') });
    await analyze({
      instruction: 'What is the revenue?',
      workspaceDir,
      outDir: path.join(root, 'run'),
      model: createOfflineAnalyst(),
      createSandbox: sandbox.factory,
    });
    expect(sandbox.sessions.map((session) => session.openedWith.excludeDirs)).toEqual([undefined]);
  });

  it('rerunAnalysis() leaves its new run folder out of the new workspace', async () => {
    const { root, workspaceDir } = await workspace();
    const oldRun = path.join(root, 'old-run');
    const start = await writeRecordedRun(oldRun, workspaceDir);
    const opened: SandboxOptions[] = [];
    const outDir = path.join(workspaceDir, 'rerun');
    await rerunAnalysis({
      runDir: oldRun,
      workspaceDir,
      outDir,
      createSandbox: (options) => {
        opened.push(options);
        return Promise.reject(new Error('no sandbox in this test'));
      },
    });
    expect(opened.map((options) => options.excludeDirs)).toEqual([['rerun']]);
    expect(await inputPaths(outDir)).toEqual(
      [...start.workspace.files.map((file) => file.path), 'sales.csv'].sort(),
    );
  });

  it('rerunAnalysis() leaves the recorded run folder out too when it lies in the new workspace', async () => {
    // `datalyst rerun runs/old .`: the earlier run's trace and artifacts are not the new data.
    const { workspaceDir } = await workspace();
    const oldRun = path.join(workspaceDir, 'runs', 'old');
    const start = await writeRecordedRun(oldRun, workspaceDir);
    const opened: SandboxOptions[] = [];
    const outDir = path.join(workspaceDir, 'runs', 'new');
    await rerunAnalysis({
      runDir: oldRun,
      workspaceDir,
      outDir,
      createSandbox: (options) => {
        opened.push(options);
        return Promise.reject(new Error('no sandbox in this test'));
      },
    });
    expect(opened.map((options) => options.excludeDirs)).toEqual([['runs/old', 'runs/new']]);
    expect(await inputPaths(outDir)).toEqual(
      [...start.workspace.files.map((file) => file.path), 'sales.csv'].sort(),
    );
  });

  it('deepAnalyze() leaves it out of every session and of every sub-analysis inputs', async () => {
    const { workspaceDir } = await workspace();
    const outDir = path.join(workspaceDir, 'deep');
    const subAnalyst: LanguageModel = {
      id: 'scripted-sub-analyst',
      contextWindowTokens: 32_000,
      async *stream(request: ModelRequest): AsyncIterable<ModelChunk> {
        const replies = request.messages.filter((message) => message.role === 'assistant').length;
        yield {
          type: 'text-delta',
          text: replies === 0 ? '<Code>print(1234)</Code>' : '<Answer>1234.</Answer>',
        };
        yield { type: 'finish', reason: 'stop' };
      },
    };
    const roles: DeepRoles = {
      modelId: 'scripted',
      offline: false,
      scope: async (input) => ({
        brief: {
          question: input.question,
          questions: [{ question: 'Revenue?', tables: [] }],
          goodAnswer: '',
        },
      }),
      supervise: async () => [{ question: 'Revenue?', tables: [] }],
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
    const sandbox = createFakeSandbox({ run: () => printed('1234\n') });
    const result = await deepAnalyze({
      instruction: 'Report on revenue.',
      workspaceDir,
      outDir,
      model: subAnalyst,
      roles,
      createSandbox: sandbox.factory,
      concurrency: 1,
    });
    expect(result.termination.reason).toBe('answered');
    expect(sandbox.sessions.length).toBeGreaterThan(0);
    expect(sandbox.sessions.every((session) => session.openedWith.excludeDirs?.join() === 'deep')).toBe(true);
    // deep.json was written before the sub-analysis listed the workspace: it is not one of its inputs.
    expect(await inputPaths(path.join(outDir, 'sub', 'S1'))).toEqual(['sales.csv']);
  });
});
