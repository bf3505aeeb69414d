import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stoppedTurnNote } from '../../src/agent/model-notes.ts';
import { createOpenAIChatModel } from '../../src/agent/openai-chat-model.ts';
import { openThread, resumeThread } from '../../src/agent/thread/index.ts';
import type { ThreadOptions } from '../../src/agent/thread/index.ts';
import {
  startFakeOpenAIServer,
  type FakeOpenAIServer,
  type FakeReply,
  type ScriptEntry,
} from '../support/fake-openai-server.ts';
import { createFakeSandbox, printed, slowCell } from './support/fake-session.ts';
import { cleanUpHarness, makeRunsDir, makeWorkspace } from './support/loop-harness.ts';

/**
 * What an OpenAI-compatible model is sent after a cancelled turn: the cancel
 * said plainly, and the new question as the user's message, in a message of
 * its own (never glued onto an <Execute> output, as it was).
 */

afterEach(cleanUpHarness);

const codeTurn = (code: string): FakeReply => ({
  type: 'text',
  text: `<Analyze>Next step.</Analyze>\n<Code>\n\`\`\`python\n${code}\n\`\`\`\n</Code>`,
});
const answerTurn = (answer: string): FakeReply => ({ type: 'text', text: `<Answer>${answer}</Answer>` });

const cancelledMidCell = stoppedTurnNote('cancelled', true) ?? '';
const cancelledBeforeCell = stoppedTurnNote('cancelled', false) ?? '';
const roundLimitReached = stoppedTurnNote('max-rounds', false) ?? '';

interface Messages {
  roles: string[];
  contents: string[];
}

function sent(server: FakeOpenAIServer, request: number): Messages {
  const messages = server.completionRequests[request]?.body?.messages ?? [];
  return {
    roles: messages.map((message) => message.role),
    contents: messages.map((message) => message.content),
  };
}

/** A thread on the fake model and sandbox; `long()` runs until the turn is cancelled. */
async function scriptedThread(
  script: ScriptEntry[],
  turnSignal: () => AbortController,
  extra: Partial<ThreadOptions> = {},
) {
  const server = await startFakeOpenAIServer({ script });
  const sandbox = createFakeSandbox({
    run: (code, _index, signal) => {
      if (code !== 'long()') return printed(`ran ${code}\n`);
      setTimeout(() => turnSignal().abort(), 20);
      return slowCell(10_000, signal);
    },
  });
  const options: ThreadOptions = {
    workspaceDir: await makeWorkspace(),
    model: createOpenAIChatModel({
      baseUrl: server.baseUrl,
      model: 'fake-model',
      retry: { maxRetries: 0, initialDelayMs: 5, maxDelayMs: 5 },
    }),
    createSandbox: sandbox.factory,
    outDir: path.join(await makeRunsDir(), 'run'),
    ...extra,
  };
  return { server, options, thread: await openThread(options) };
}

/** A reply that never comes: the turn is cancelled while the model is asked. */
function hangAndCancel(controller: () => AbortController): ScriptEntry {
  return () => {
    setTimeout(() => controller().abort(), 20);
    return { type: 'hang' };
  };
}

describe('the question after a cancelled turn', () => {
  it('after the first question is cancelled mid-cell, the next question is a user message that says so, not the cell’s output', async () => {
    let controller = new AbortController();
    const { server, thread } = await scriptedThread(
      [codeTurn('long()'), answerTurn('By region.')],
      () => controller,
    );
    try {
      const first = await thread.ask('Give me an overview.', { signal: controller.signal }).result;
      expect(first.termination.reason).toBe('cancelled');
      controller = new AbortController();
      const second = await thread.ask('Which region sells more?').result;
      expect(second).toMatchObject({ answer: 'By region.', termination: { reason: 'answered' } });

      const { roles, contents } = sent(server, 1);
      expect(roles).toEqual(['system', 'user', 'assistant', 'user']);
      expect(contents[2]).toContain('long()');
      expect(contents[3]).toBe(`${cancelledMidCell}\n\nWhich region sells more?`);
      expect(cancelledMidCell).toMatch(
        /^The user cancelled the previous question before it was answered; the cell that was running was stopped/,
      );
    } finally {
      await thread.close();
      await server.close();
    }
  });

  it('a cancel while the model replies to a cell’s output: the question follows the <Execute> output after the note, in one user message', async () => {
    let controller = new AbortController();
    const { server, thread } = await scriptedThread(
      [codeTurn('x = 1'), hangAndCancel(() => controller), answerTurn('Done.')],
      () => controller,
    );
    try {
      const first = await thread.ask('Give me an overview.', { signal: controller.signal }).result;
      expect(first.termination.reason).toBe('cancelled');
      controller = new AbortController();
      await thread.ask('Which region sells more?').result;

      const { roles, contents } = sent(server, 2);
      // Roles alternate (some chat templates refuse two user messages in a row): the stopped turn's
      // output, then the note, then the question.
      expect(roles).toEqual(['system', 'user', 'assistant', 'user']);
      expect(contents[3]).toMatch(/^<Execute>\nran x = 1\n+<\/Execute>\n\n/);
      expect(contents[3]?.endsWith(`\n\n${cancelledBeforeCell}\n\nWhich region sells more?`)).toBe(true);
    } finally {
      await thread.close();
      await server.close();
    }
  });

  it('a cancel during the first reply, before any cell: the model is told, then asked the new question', async () => {
    let controller = new AbortController();
    const { server, thread } = await scriptedThread(
      [hangAndCancel(() => controller), answerTurn('By region.')],
      () => controller,
    );
    try {
      const first = await thread.ask('Give me an overview.', { signal: controller.signal }).result;
      expect(first.termination.reason).toBe('cancelled');
      controller = new AbortController();
      await thread.ask('Which region sells more?').result;

      const { roles, contents } = sent(server, 1);
      expect(roles).toEqual(['system', 'user']);
      expect(contents[1]).toContain('Give me an overview.');
      expect(contents[1]?.endsWith(`\n\n${cancelledBeforeCell}\n\nWhich region sells more?`)).toBe(true);
    } finally {
      await thread.close();
      await server.close();
    }
  });

  it('a cancelled follow-up: the question after it says so, after the follow-up’s unfinished cell', async () => {
    let controller = new AbortController();
    const { server, thread } = await scriptedThread(
      [answerTurn('An overview.'), codeTurn('long()'), answerTurn('By month.')],
      () => controller,
    );
    try {
      await thread.ask('Give me an overview.').result;
      const second = await thread.ask('Which region sells more?', { signal: controller.signal }).result;
      expect(second.termination.reason).toBe('cancelled');
      controller = new AbortController();
      const third = await thread.ask('And by month?').result;
      expect(third.answer).toBe('By month.');

      const { roles, contents } = sent(server, 2);
      expect(roles).toEqual(['system', 'user', 'assistant', 'user', 'assistant', 'user']);
      expect(contents[3]).toBe('Which region sells more?');
      expect(contents[4]).toContain('long()');
      expect(contents[5]).toBe(`${cancelledMidCell}\n\nAnd by month?`);
    } finally {
      await thread.close();
      await server.close();
    }
  });

  it('a question after a turn that reached its round limit says so, after the cell’s output', async () => {
    const { server, thread } = await scriptedThread(
      [codeTurn('x = 1'), answerTurn('By region.')],
      () => new AbortController(),
      { maxRounds: 1 },
    );
    try {
      const first = await thread.ask('Give me an overview.').result;
      expect(first.termination.reason).toBe('max-rounds');
      await thread.ask('Which region sells more?').result;

      const { roles, contents } = sent(server, 1);
      expect(roles).toEqual(['system', 'user', 'assistant', 'user']);
      expect(contents[3]).toMatch(/^<Execute>\nran x = 1\n+<\/Execute>\n\n/);
      expect(contents[3]?.endsWith(`\n\n${roundLimitReached}\n\nWhich region sells more?`)).toBe(true);
    } finally {
      await thread.close();
      await server.close();
    }
  });

  it('a resumed thread tells the model of the cancel as the live thread did', async () => {
    let controller = new AbortController();
    const { server, options, thread } = await scriptedThread(
      [codeTurn('long()'), answerTurn('By region.'), answerTurn('By month.')],
      () => controller,
    );
    try {
      await thread.ask('Give me an overview.', { signal: controller.signal }).result;
      controller = new AbortController();
      await thread.ask('Which region sells more?').result;
      await thread.close();
      const { workspaceDir: _workspace, outDir, ...rest } = options;
      const resumed = await resumeThread(outDir ?? '', rest);
      await resumed.ask('And by month?').result;
      await resumed.close();

      const live = sent(server, 1);
      const rebuilt = sent(server, 2);
      expect(rebuilt.contents.slice(0, live.contents.length)).toEqual(live.contents);
      expect(rebuilt.roles.slice(0, live.roles.length)).toEqual(live.roles);
    } finally {
      await server.close();
    }
  });

  it('a thread resumed after a cancelled last turn opens the next question with the note', async () => {
    const controller = new AbortController();
    const { server, options, thread } = await scriptedThread(
      [codeTurn('long()'), answerTurn('By region.')],
      () => controller,
    );
    try {
      await thread.ask('Give me an overview.', { signal: controller.signal }).result;
      await thread.close();
      const { workspaceDir: _workspace, outDir, ...rest } = options;
      const resumed = await resumeThread(outDir ?? '', rest);
      await resumed.ask('Which region sells more?').result;
      await resumed.close();

      const { roles, contents } = sent(server, 1);
      expect(roles).toEqual(['system', 'user', 'assistant', 'user']);
      // The replay's note (the stopped cell is not run again) comes first; nothing stands between the
      // stop's note and the question, which is where the offline analyst looks for it.
      expect(contents[3]).toMatch(
        /^The sandbox was restarted and no earlier cell was run again.*Not run again: E1 \(it ended cancelled/,
      );
      expect(contents[3]?.endsWith(`\n\n${cancelledMidCell}\n\nWhich region sells more?`)).toBe(true);
    } finally {
      await server.close();
    }
  });
});
