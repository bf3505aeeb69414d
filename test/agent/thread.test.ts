import { existsSync } from 'node:fs';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { analyze } from '../../src/agent/analyze.ts';
import type { AgentEvent } from '../../src/agent/events.ts';
import { askUnansweredReply } from '../../src/agent/model-notes.ts';
import { createOpenAIChatModel } from '../../src/agent/openai-chat-model.ts';
import { openThread, resumeThread } from '../../src/agent/thread/index.ts';
import type { ThreadOptions } from '../../src/agent/thread/index.ts';
import { ThreadStateError } from '../../src/errors/index.ts';
import { splitTurns } from '../../src/trace/turns.ts';
import type { TraceRecord } from '../../src/trace/schema.ts';
import {
  startFakeOpenAIServer,
  type FakeOpenAIServer,
  type ScriptEntry,
} from '../support/fake-openai-server.ts';
import {
  createFakeSandbox,
  printed,
  slowCell,
  testProfile,
  type FakeSessionOptions,
} from './support/fake-session.ts';
import { cleanUpHarness, makeRunsDir, makeWorkspace, readTrace } from './support/loop-harness.ts';

afterEach(cleanUpHarness);

const codeTurn = (code: string) => ({
  type: 'text' as const,
  text: `<Analyze>Next step.</Analyze>\n<Code>\n\`\`\`python\n${code}\n\`\`\`\n</Code>`,
});
const answerTurn = (answer: string) => ({ type: 'text' as const, text: `<Answer>${answer}</Answer>` });
const askTurn = (question: string) => ({
  type: 'text' as const,
  text: `<Analyze>Unclear.</Analyze>\n<Ask>${question}</Ask>`,
});

interface Setup {
  server: FakeOpenAIServer;
  options: ThreadOptions;
  sandbox: ReturnType<typeof createFakeSandbox>;
  runDir: string;
}

async function setUp(
  script: ScriptEntry[],
  session: FakeSessionOptions = {},
  extra: Partial<ThreadOptions> = {},
): Promise<Setup> {
  const server = await startFakeOpenAIServer({ script });
  const sandbox = createFakeSandbox(session);
  const runDir = path.join(await makeRunsDir(), 'run');
  const model = createOpenAIChatModel({
    baseUrl: server.baseUrl,
    model: 'fake-model',
    retry: { maxRetries: 0, initialDelayMs: 5, maxDelayMs: 5 },
  });
  const options: ThreadOptions = {
    workspaceDir: await makeWorkspace(),
    model,
    createSandbox: sandbox.factory,
    outDir: runDir,
    ...extra,
  };
  return { server: { ...server, close: server.close }, options, sandbox, runDir };
}

async function collect(turn: AsyncIterable<AgentEvent>): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for await (const event of turn) events.push(event);
  return events;
}

function types(records: readonly TraceRecord[]): string[] {
  return records.map((record) => record.type);
}

describe('thread', () => {
  it('holds three turns in one session: a follow-up uses the kernel of the first, then an <Ask> and its reply', async () => {
    const { server, options, sandbox, runDir } = await setUp(
      [
        codeTurn("df = load('sales.csv')"),
        answerTurn('North 10, South 20.'),
        codeTurn('df.groupby("month").sum()'),
        askTurn('Which year do you mean?'),
        codeTurn('df[df.year == 2024]'),
        answerTurn('In 2024: 30.'),
      ],
      { run: (code) => printed(`ran ${code}\n`) },
    );
    try {
      const thread = await openThread(options);
      const first = thread.ask('Which region sells more?');
      const firstEvents = await collect(first);
      const firstResult = await first.result;
      expect(firstResult).toMatchObject({
        turn: 1,
        answer: 'North 10, South 20.',
        termination: { reason: 'answered' },
        outputIds: ['E1'],
      });
      expect(firstEvents[0]?.type).toBe('run-start');
      expect(firstEvents.at(-1)?.type).toBe('turn-end');

      const second = await thread.ask('Now by month.').result;
      expect(second).toMatchObject({
        turn: 2,
        answer: null,
        ask: 'Which year do you mean?',
        termination: { reason: 'asked' },
        outputIds: ['E2'],
      });
      expect(thread.openQuestion).toBe('Which year do you mean?');

      const thirdTurn = thread.ask('2024.');
      const thirdEvents = await collect(thirdTurn);
      expect(thirdEvents.find((event) => event.type === 'turn-start')).toMatchObject({
        turn: 3,
        replyToAsk: true,
      });
      expect((await thirdTurn.result).answer).toBe('In 2024: 30.');
      const summary = await thread.close();
      expect(summary).toMatchObject({ turns: 3, rounds: 6, answer: 'In 2024: 30.' });

      // One session for the whole thread, its cells in order.
      expect(sandbox.sessions).toHaveLength(1);
      expect(sandbox.sessions[0]?.executed).toEqual([
        "df = load('sales.csv')",
        'df.groupby("month").sum()',
        'df[df.year == 2024]',
      ]);
      expect(sandbox.sessions[0]?.closed).toBe(true);

      // The model saw the whole conversation: the follow-up after the first answer, the reply after the question.
      const fourth = server.completionRequests[3]?.body?.messages ?? [];
      expect(fourth.map((message) => message.role)).toEqual([
        'system',
        'user',
        'assistant',
        'user',
        'assistant',
        'user',
        'assistant',
        'user',
      ]);
      expect(fourth[5]?.content).toBe('Now by month.');
      const fifth = server.completionRequests[4]?.body?.messages ?? [];
      expect(fifth.at(-1)?.content).toBe('2024.');
      expect(server.completionRequests[0]?.body?.stop).toContain('</Ask>');

      const trace = await readTrace(runDir);
      const turns = splitTurns(trace);
      expect(turns.map((turn) => [turn.turn, turn.question, turn.end?.termination.reason])).toEqual([
        [1, 'Which region sells more?', 'answered'],
        [2, 'Now by month.', 'asked'],
        [3, '2024.', 'answered'],
      ]);
      // Rounds are named as the trace numbers them, over the whole thread (the third turn's answer is its round 6).
      expect(turns.map((turn) => turn.end?.termination.detail)).toEqual([
        'Answered in round 2.',
        'Asked a question in round 4.',
        'Answered in round 6.',
      ]);
      expect(trace.filter((record) => record.type === 'step' && record.kind === 'ask')).toHaveLength(1);
      expect(
        trace
          .filter((record) => record.type === 'execution')
          .map((record) => record.type === 'execution' && record.round),
      ).toEqual([1, 3, 5]);
      expect(trace.at(-1)?.type).toBe('run-end');
    } finally {
      await server.close();
    }
  });

  it('refuses a second question while a turn runs, and any after close', async () => {
    const { server, options } = await setUp([answerTurn('a'), answerTurn('b')]);
    try {
      const thread = await openThread(options);
      const turn = thread.ask('one');
      expect(() => thread.ask('two')).toThrow(ThreadStateError);
      await turn.result;
      await thread.close();
      expect(() => thread.ask('three')).toThrow(expect.objectContaining({ code: 'THREAD_CLOSED' }));
    } finally {
      await server.close();
    }
  });

  it('starts from a profile it is given (a deep run made it once) instead of profiling the workspace again', async () => {
    const given = { ...testProfile, files: testProfile.files.map((file) => ({ ...file, notes: ['given'] })) };
    const { server, options, sandbox, runDir } = await setUp(
      [answerTurn('a')],
      {},
      { workspaceProfile: given },
    );
    try {
      const thread = await openThread(options);
      await thread.ask('one').result;
      await thread.close();
      expect(sandbox.sessions[0]?.profiled).toEqual([]);
      const trace = await readTrace(runDir);
      expect(trace.find((record) => record.type === 'workspace-profile')).toMatchObject({ profile: given });
      // The model's first message is written from it.
      expect(JSON.stringify(server.completionRequests[0]?.body?.messages)).toContain('sales.csv');
    } finally {
      await server.close();
    }
  });

  it('a one-shot run answers <Ask> with the fixed reply and records both', async () => {
    const { server, options, runDir } = await setUp([
      askTurn('Which column is revenue?'),
      answerTurn('Assuming "revenue": 30.'),
    ]);
    try {
      const result = await analyze({ ...options, instruction: 'Total revenue?' });
      expect(result.termination.reason).toBe('answered');
      const last = server.completionRequests[1]?.body?.messages?.at(-1);
      expect(last).toEqual({ role: 'user', content: askUnansweredReply });
      const trace = await readTrace(runDir);
      expect(trace.find((record) => record.type === 'step' && record.kind === 'ask')).toMatchObject({
        text: 'Which column is revenue?',
      });
      expect(trace.find((record) => record.type === 'notice' && record.kind === 'ask-reply')).toMatchObject({
        text: askUnansweredReply,
      });
    } finally {
      await server.close();
    }
  });

  it('streams a running cell’s output as execution-output events before its execution-end', async () => {
    const { server, options } = await setUp([codeTurn('for i in range(10): print(i)'), answerTurn('done')], {
      run: async (_code, _index, signal, onOutput) => {
        for (let index = 0; index < 10; index++) {
          onOutput?.({ stream: 'stdout', text: `${index}\n` });
          await slowCell(5, signal);
        }
        return printed('0\n1\n');
      },
    });
    try {
      const thread = await openThread(options);
      const events = await collect(thread.ask('count'));
      const end = events.findIndex((event) => event.type === 'execution-end');
      const outputs = events.slice(0, end).filter((event) => event.type === 'execution-output');
      expect(outputs.length).toBeGreaterThanOrEqual(5);
      expect(outputs.map((event) => (event.type === 'execution-output' ? event.text : '')).join('')).toBe(
        '0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n',
      );
      await thread.close();
    } finally {
      await server.close();
    }
  });

  it('a cancelled turn keeps what its cell printed, and the thread goes on in the same session', async () => {
    const controller = new AbortController();
    const { server, options, sandbox, runDir } = await setUp(
      [codeTurn('long()'), codeTurn('x'), answerTurn('after')],
      {
        run: async (code, _index, signal, onOutput) => {
          if (code !== 'long()') return printed('x\n');
          onOutput?.({ stream: 'stdout', text: 'step 1\n' });
          onOutput?.({ stream: 'stderr', text: 'warning\n' });
          setTimeout(() => controller.abort(), 20);
          return slowCell(10_000, signal);
        },
      },
    );
    try {
      const thread = await openThread(options);
      const first = await thread.ask('slow', { signal: controller.signal }).result;
      expect(first.termination.reason).toBe('cancelled');
      const second = await thread.ask('again').result;
      expect(second.termination.reason).toBe('answered');
      expect(sandbox.sessions).toHaveLength(1);
      await thread.close();
      const trace = await readTrace(runDir);
      const cancelled = trace.find((record) => record.type === 'execution' && record.outputId === 'E1');
      expect(cancelled).toMatchObject({
        result: { status: 'cancelled', stdout: { text: 'step 1\n' }, stderr: { text: 'warning\n' } },
      });
    } finally {
      await server.close();
    }
  });

  it('a question that cannot fit in the thread’s budget ends its turn with context-budget, without calling the model', async () => {
    const { server, options } = await setUp(
      [answerTurn('first')],
      {},
      { contextBudgetTokens: 1200, replyReserveTokens: 300 },
    );
    try {
      const thread = await openThread(options);
      await thread.ask('Which region sells more?').result;
      const second = await thread.ask('x'.repeat(6000)).result;
      expect(second.termination.reason).toBe('context-budget');
      expect(second.termination.detail).toMatch(/leaves no room/);
      expect(server.completionRequests).toHaveLength(1);
      await thread.close();
    } finally {
      await server.close();
    }
  });

  it('releases an idle sandbox and replays its cells before the next question, telling the model what differs', async () => {
    let calls = 0;
    const { server, options, sandbox, runDir } = await setUp(
      [codeTurn('a = 1'), answerTurn('one'), codeTurn('print(a)'), answerTurn('two')],
      { run: () => printed(`call ${++calls}\n`) },
      { idleTimeoutMs: 20 },
    );
    try {
      const thread = await openThread(options);
      await thread.ask('first').result;
      await new Promise((resolve) => setTimeout(resolve, 80));
      expect(thread.sandboxState).toBe('released');
      expect(sandbox.sessions[0]?.closed).toBe(true);
      const events = await collect(thread.ask('second'));
      const replay = events.find((event) => event.type === 'replay-end');
      expect(replay).toMatchObject({ summary: { cells: 1, replayed: 1, mismatches: [{ outputId: 'E1' }] } });
      expect(sandbox.sessions).toHaveLength(2);
      expect(sandbox.sessions[1]?.executed).toEqual(['a = 1', 'print(a)']);
      const told = server.completionRequests[2]?.body?.messages?.at(-1)?.content ?? '';
      expect(told).toMatch(/run again in order/);
      expect(told).toMatch(/E1: printed "call 1\\n" → "call 2\\n"/);
      expect(told).toMatch(/second$/);
      await thread.close();
      expect(types(await readTrace(runDir))).toContain('replay');
    } finally {
      await server.close();
    }
  });

  it('resumes from its run folder after close: same output ids, rounds and conversation', async () => {
    const { server, options, sandbox, runDir } = await setUp(
      [codeTurn('a = 1'), answerTurn('one'), codeTurn('print(a)'), answerTurn('two')],
      { run: (code) => printed(code === 'a = 1' ? '' : '1\n') },
    );
    try {
      const thread = await openThread(options);
      await thread.ask('first').result;
      await thread.close();
      const { workspaceDir: _workspace, outDir: _out, ...rest } = options;
      const resumed = await resumeThread(runDir, rest);
      const events = await collect(resumed.ask('second'));
      expect(events.find((event) => event.type === 'replay-end')).toMatchObject({
        summary: { replayed: 1, mismatches: [] },
      });
      const result = events.find((event) => event.type === 'turn-end');
      expect(result).toMatchObject({ result: { turn: 2, answer: 'two', outputIds: ['E2'] } });
      await resumed.close();
      expect(sandbox.sessions.at(-1)?.executed).toEqual(['a = 1', 'print(a)']);
      const messages = server.completionRequests[2]?.body?.messages ?? [];
      expect(messages.map((message) => message.role)).toEqual([
        'system',
        'user',
        'assistant',
        'user',
        'assistant',
        'user',
      ]);
      const trace = await readTrace(runDir);
      expect(splitTurns(trace).map((turn) => turn.end?.answer)).toEqual(['one', 'two']);
      expect(
        trace
          .filter((record) => record.type === 'model-turn')
          .map((record) => record.type === 'model-turn' && record.round),
      ).toEqual([1, 2, 3, 4]);
    } finally {
      await server.close();
    }
  });

  it('a resumed thread on a workspace with nothing readable ends no-data again, without the model or a sandbox', async () => {
    const unreadable = {
      truncated: false,
      files: [
        { path: 'blob.csv', sizeBytes: 64, format: 'csv' as const, tables: [], error: 'not text', notes: [] },
      ],
    };
    let profile: typeof testProfile = unreadable;
    const { server, options, sandbox, runDir } = await setUp([answerTurn('an answer about nothing')], {
      profile: () => profile,
    });
    try {
      const thread = await openThread(options);
      const first = await thread.ask('first').result;
      expect(first.termination.reason).toBe('no-data');
      await thread.close();
      const { outDir: _out, ...rest } = options;
      const resumed = await resumeThread(runDir, rest);
      const second = await resumed.ask('second').result;
      await resumed.close();
      expect(second.termination).toEqual(first.termination);
      expect(second.answer).toBeNull();
      expect(server.completionRequests).toHaveLength(0);
      expect(sandbox.sessions).toHaveLength(1);

      // A file came since: the workspace is profiled again in a sandbox, and now holds a table, so the model is asked.
      await writeFile(path.join(options.workspaceDir, 'more.csv'), 'a,b\n1,2\n');
      profile = { truncated: false, files: [...unreadable.files, ...testProfile.files] };
      const changed = await resumeThread(runDir, rest);
      const third = await changed.ask('third').result;
      await changed.close();
      expect(third.termination.reason).toBe('answered');
      expect(server.completionRequests).toHaveLength(1);
      expect(sandbox.sessions).toHaveLength(2);
      const change = (await readTrace(runDir)).find((record) => record.type === 'workspace-change');
      expect(change).toMatchObject({ added: [{ path: 'more.csv', sizeBytes: 8 }], changed: [], removed: [] });
    } finally {
      await server.close();
    }
  });

  it('close() ends a running turn nobody reads, and refuses a turn that never began', async () => {
    const { server, options, sandbox, runDir } = await setUp([codeTurn('long()')], {
      run: (_code, _index, signal) => slowCell(60_000, signal),
    });
    try {
      const thread = await openThread(options);
      const turn = thread.ask('slow');
      const iterator = turn[Symbol.asyncIterator]();
      // Read until the cell runs, then stop reading.
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
        if (next.value.type === 'execution-start') break;
      }
      const summary = await thread.close();
      expect(summary.termination.reason).toBe('cancelled');
      expect((await turn.result).termination.reason).toBe('cancelled');
      expect(sandbox.sessions[0]?.closed).toBe(true);
      const trace = await readTrace(runDir);
      expect(trace.at(-1)?.type).toBe('run-end');

      const other = await setUp([]);
      try {
        const idle = await openThread(other.options);
        const never = idle.ask('never read');
        await idle.close();
        await expect(never.result).rejects.toMatchObject({ code: 'THREAD_CLOSED' });
      } finally {
        await other.server.close();
      }
    } finally {
      await server.close();
    }
  });

  it('a thread closed before any question leaves no trace and no run folder it made', async () => {
    const { server, options, runDir } = await setUp([]);
    try {
      const thread = await openThread(options);
      expect(existsSync(runDir)).toBe(true);
      await thread.close();
      expect(existsSync(runDir)).toBe(false);
      expect(existsSync(path.dirname(runDir))).toBe(true);

      // Under a runs folder that did not exist: both go.
      const { outDir: _outDir, ...rest } = options;
      const runsDir = path.join(await makeRunsDir(), 'runs');
      const underRuns = await openThread({ ...rest, runsDir });
      expect(path.dirname(underRuns.outDir)).toBe(runsDir);
      await underRuns.close();
      expect(existsSync(runsDir)).toBe(false);
    } finally {
      await server.close();
    }
  });

  it('a thread closed before any question never removes a folder that was there or holds what it did not write', async () => {
    const { server, options } = await setUp([]);
    try {
      // The caller's empty folder stays.
      const given = await makeRunsDir();
      await (await openThread({ ...options, outDir: given })).close();
      expect(await readdir(given)).toEqual([]);

      // A folder the thread made, where the caller then put a file: both stay.
      const made = path.join(await makeRunsDir(), 'run');
      const thread = await openThread({ ...options, outDir: made });
      await writeFile(path.join(made, 'notes.txt'), 'mine');
      await thread.close();
      expect(await readdir(made)).toEqual(['notes.txt']);

      // An existing runs folder with another run in it: only the thread's own folder goes.
      const { outDir: _outDir, ...rest } = options;
      const runsDir = await makeRunsDir();
      await mkdir(path.join(runsDir, 'earlier-run'));
      await (await openThread({ ...rest, runsDir })).close();
      expect(await readdir(runsDir)).toEqual(['earlier-run']);
    } finally {
      await server.close();
    }
  });
});
