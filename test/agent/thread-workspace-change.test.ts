import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { noDataFilesLine } from '../../src/agent/first-message.ts';
import { createOpenAIChatModel } from '../../src/agent/openai-chat-model.ts';
import { openThread, resumeThread } from '../../src/agent/thread/index.ts';
import type { ThreadOptions } from '../../src/agent/thread/index.ts';
import { renderRunFolder } from '../../src/report/index.ts';
import type { WorkspaceProfile } from '../../src/sandbox/workspace-profile.ts';
import { startFakeOpenAIServer, type ScriptEntry } from '../support/fake-openai-server.ts';
import { createFakeSandbox, printed, testProfile } from './support/fake-session.ts';
import { cleanUpHarness, makeRunsDir, makeWorkspace, readTrace } from './support/loop-harness.ts';

/**
 * A thread whose workspace gains, changes or loses files between questions
 * (the server adds the files a follow-up attaches): the change is found when
 * the sandbox opens again, recorded with SHA-256, profiled, and told to the
 * model before the question; a thread that began with no data analyses the
 * files that came. The real sandbox's side is in the .docker test beside this.
 */

afterEach(cleanUpHarness);

const codeTurn = (code: string) => ({
  type: 'text' as const,
  text: `<Analyze>Next step.</Analyze>\n<Code>\n${code}\n</Code>`,
});
const answerTurn = (answer: string) => ({ type: 'text' as const, text: `<Answer>${answer}</Answer>` });

const personCsv = 'name,age\nAda,36\nAlan,41\n';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

const personProfile: WorkspaceProfile['files'][number] = {
  ...(testProfile.files[0] as WorkspaceProfile['files'][number]),
  path: 'person.csv',
  sizeBytes: personCsv.length,
};

/** Folders and servers this file made, removed after each test (the harness removes its own). */
const afterCleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (afterCleanups.length > 0) await afterCleanups.pop()?.();
});

async function emptyWorkspace(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-ws-empty-'));
  afterCleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function setUp(script: ScriptEntry[], workspaceDir: string, profile: () => WorkspaceProfile) {
  const server = await startFakeOpenAIServer({ script });
  afterCleanups.push(() => server.close());
  const sandbox = createFakeSandbox({ profile, run: () => printed('cell ran\n') });
  const runDir = path.join(await makeRunsDir(), 'run');
  const options: ThreadOptions = {
    workspaceDir,
    outDir: runDir,
    createSandbox: sandbox.factory,
    model: createOpenAIChatModel({
      baseUrl: server.baseUrl,
      model: 'fake-model',
      retry: { maxRetries: 0, initialDelayMs: 5, maxDelayMs: 5 },
    }),
  };
  return { server, sandbox, runDir, options };
}

const lastUserMessage = (messages: readonly { role: string; content: string }[] | undefined) =>
  messages?.findLast((message) => message.role === 'user')?.content ?? '';

describe('a thread whose workspace changes between questions', () => {
  it('began with no files (no-data): after a file is added and the sandbox released, the next question goes to the model with the file profiled', async () => {
    const workspaceDir = await emptyWorkspace();
    let profile: WorkspaceProfile = { truncated: false, files: [] };
    const { server, sandbox, runDir, options } = await setUp(
      [codeTurn("pd.read_csv('person.csv')"), answerTurn('Two people.')],
      workspaceDir,
      () => profile,
    );
    const thread = await openThread(options);
    const first = await thread.ask('Hello').result;
    expect(first.termination).toMatchObject({ reason: 'no-data', detail: /holds no files/ });

    await writeFile(path.join(workspaceDir, 'person.csv'), personCsv);
    profile = { truncated: false, files: [personProfile] };
    await thread.releaseSandbox();
    const second = await thread.ask('Describe the data').result;
    await thread.close();

    expect(second).toMatchObject({ termination: { reason: 'answered' }, answer: 'Two people.' });
    expect(sandbox.sessions).toHaveLength(2);
    expect(sandbox.sessions[1]?.executed).toEqual(["pd.read_csv('person.csv')"]);
    // The model's first request holds the note: which file came and its profile, then the question.
    const told = lastUserMessage(server.completionRequests[0]?.body?.messages);
    expect(told).toContain(`# Data\n${noDataFilesLine}`);
    expect(told).toContain('The workspace changed since the last question: 1 file was added ("person.csv").');
    expect(told).toContain(
      `# Data changes\nAdded file 1: {"name":"person.csv","size":"${personCsv.length}B","format":"csv"`,
    );
    expect(told).toMatch(/Describe the data$/);

    const trace = await readTrace(runDir);
    const types = trace.map((record) => record.type);
    // Profiled again, then the change, then the question.
    expect(types.slice(types.indexOf('turn-end'), types.lastIndexOf('turn-start') + 1)).toEqual([
      'turn-end',
      'workspace-profile',
      'workspace-change',
      'notice',
      'turn-start',
    ]);
    expect(trace.find((record) => record.type === 'workspace-change')).toMatchObject({
      added: [{ path: 'person.csv', sizeBytes: personCsv.length, sha256: sha256(personCsv) }],
      changed: [],
      removed: [],
    });
    expect(trace.find((record) => record.type === 'notice' && record.kind === 'workspace')).toMatchObject({
      text: expect.stringContaining(`added person.csv (${personCsv.length} B)`),
    });

    // The report's provenance lists the file that came, with its SHA-256 and the question it came before.
    await renderRunFolder(runDir, { formats: ['html', 'md'] });
    const markdown = await readFile(path.join(runDir, 'report.md'), 'utf8');
    expect(markdown).toContain(
      `| person.csv | ${personCsv.length} B | added before question 2 | \`${sha256(personCsv)}\` |`,
    );
    const html = await readFile(path.join(runDir, 'report.html'), 'utf8');
    expect(html).toContain(
      `<td class="mono">person.csv</td><td>${personCsv.length} B</td><td>added before question 2</td><td class="hash">${sha256(personCsv)}</td>`,
    );
  });

  it('a thread with nothing readable sees a file that came even while its sandbox is open', async () => {
    const workspaceDir = await emptyWorkspace();
    let profile: WorkspaceProfile = { truncated: false, files: [] };
    const { sandbox, options } = await setUp([answerTurn('Seen.')], workspaceDir, () => profile);
    const thread = await openThread(options);
    expect((await thread.ask('Hello').result).termination.reason).toBe('no-data');
    expect(thread.sandboxState).toBe('open');
    // Unchanged: no-data again, no new sandbox.
    expect((await thread.ask('Still?').result).termination.reason).toBe('no-data');
    expect(sandbox.sessions).toHaveLength(1);
    await writeFile(path.join(workspaceDir, 'person.csv'), personCsv);
    profile = { truncated: false, files: [personProfile] };
    expect((await thread.ask('Now?').result).termination.reason).toBe('answered');
    // The open session held a copy of the old workspace: a fresh one was opened.
    expect(sandbox.sessions.map((session) => session.closed)).toEqual([true, false]);
    await thread.close();
  });

  it('a follow-up after files came, changed and went: the replay runs first, the note names each, and the inputs known move on', async () => {
    const workspaceDir = await makeWorkspace();
    await writeFile(path.join(workspaceDir, 'old.csv'), 'x\n1\n');
    let profile: WorkspaceProfile = testProfile;
    const { server, sandbox, runDir, options } = await setUp(
      [codeTurn('first()'), answerTurn('one'), codeTurn('second()'), answerTurn('two'), answerTurn('three')],
      workspaceDir,
      () => profile,
    );
    const thread = await openThread(options);
    await thread.ask('Which region sells more?').result;
    await writeFile(path.join(workspaceDir, 'person.csv'), personCsv);
    await writeFile(path.join(workspaceDir, 'sales.csv'), 'region,revenue\nnorth,11\n');
    await unlink(path.join(workspaceDir, 'old.csv'));
    profile = { truncated: false, files: [personProfile, ...testProfile.files] };
    await thread.releaseSandbox();
    await thread.ask('Describe the data').result;
    expect(sandbox.sessions[1]?.executed).toEqual(['first()', 'second()']);
    const told = lastUserMessage(server.completionRequests[2]?.body?.messages);
    expect(told).toContain(
      'The workspace changed since the last question: 1 file was added ("person.csv"); 1 file changed ("sales.csv"); 1 file was removed ("old.csv").',
    );
    expect(told.indexOf('The sandbox was restarted')).toBeLessThan(told.indexOf('The workspace changed'));
    expect(told).toMatch(/Added file 1: \{"name":"person.csv"/);
    expect(told).toMatch(/Changed file 1: \{"name":"sales.csv"/);
    expect(told).toMatch(/Removed file 1: \{"name":"old.csv","size":"4B"\}/);

    // Released again with nothing changed: a replay, no second change.
    await thread.releaseSandbox();
    await thread.ask('And now?').result;
    await thread.close();
    const changes = (await readTrace(runDir)).filter((record) => record.type === 'workspace-change');
    expect(changes).toHaveLength(1);
    expect(lastUserMessage(server.completionRequests[4]?.body?.messages)).not.toContain('workspace changed');
  });

  it('resumeThread compares the workspace with the trace’s inputs (changes included) and rebuilds the note the model saw', async () => {
    const workspaceDir = await emptyWorkspace();
    let profile: WorkspaceProfile = { truncated: false, files: [] };
    const { server, runDir, options } = await setUp(
      [answerTurn('Two people.'), answerTurn('Still two.')],
      workspaceDir,
      () => profile,
    );
    const thread = await openThread(options);
    await thread.ask('Hello').result;
    await writeFile(path.join(workspaceDir, 'person.csv'), personCsv);
    profile = { truncated: false, files: [personProfile] };
    await thread.releaseSandbox();
    await thread.ask('Describe the data').result;
    await thread.close();
    const before = server.completionRequests[0]?.body?.messages ?? [];

    const { outDir: _out, workspaceDir: _workspace, ...rest } = options;
    const resumed = await resumeThread(runDir, rest);
    const third = await resumed.ask('And the ages?').result;
    await resumed.close();
    expect(third.answer).toBe('Still two.');
    // No change since: nothing recorded again; the conversation as the model saw it, the note included.
    const trace = await readTrace(runDir);
    expect(trace.filter((record) => record.type === 'workspace-change')).toHaveLength(1);
    const after = server.completionRequests[1]?.body?.messages ?? [];
    expect(after.slice(0, before.length)).toEqual(before);
  });

  it('files put into the workspace between openThread and the first question are run-start’s inputs, not a change', async () => {
    const workspaceDir = await emptyWorkspace();
    const { runDir, options } = await setUp([answerTurn('one'), answerTurn('two')], workspaceDir, () => ({
      truncated: false,
      files: [personProfile],
    }));
    const thread = await openThread(options);
    await writeFile(path.join(workspaceDir, 'person.csv'), personCsv);
    await thread.ask('Describe the data').result;
    await thread.releaseSandbox();
    await thread.ask('And now?').result;
    await thread.close();
    const trace = await readTrace(runDir);
    const start = trace[0];
    expect(start?.type === 'run-start' && start.workspace.files).toEqual([
      { path: 'person.csv', sizeBytes: personCsv.length, sha256: sha256(personCsv) },
    ]);
    expect(trace.filter((record) => record.type === 'workspace-change')).toEqual([]);
  });

  it("whenNoFiles 'ask-model': a workspace without files goes to the model, whose first message says there are none", async () => {
    const workspaceDir = await emptyWorkspace();
    const { server, options } = await setUp(
      [answerTurn('Hello! Attach a file to analyse.')],
      workspaceDir,
      () => ({
        truncated: false,
        files: [],
      }),
    );
    const thread = await openThread({ ...options, whenNoFiles: 'ask-model' });
    const result = await thread.ask('Hello').result;
    await thread.close();
    expect(result).toMatchObject({
      termination: { reason: 'answered' },
      answer: 'Hello! Attach a file to analyse.',
    });
    expect(lastUserMessage(server.completionRequests[0]?.body?.messages)).toBe(
      `# Instruction\nHello\n\n# Data\n${noDataFilesLine}`,
    );
  });

  it("whenNoFiles 'ask-model' still ends no-data when the files cannot be read", async () => {
    const workspaceDir = await emptyWorkspace();
    await writeFile(path.join(workspaceDir, 'blob.csv'), Buffer.from([0, 1, 2, 3]));
    const { server, options } = await setUp([answerTurn('about nothing')], workspaceDir, () => ({
      truncated: false,
      files: [
        {
          path: 'blob.csv',
          sizeBytes: 4,
          format: 'csv',
          tables: [],
          error: 'binary data, not text',
          notes: [],
        },
      ],
    }));
    const thread = await openThread({ ...options, whenNoFiles: 'ask-model' });
    expect((await thread.ask('Hello').result).termination.reason).toBe('no-data');
    await thread.close();
    expect(server.completionRequests).toHaveLength(0);
  });
});
