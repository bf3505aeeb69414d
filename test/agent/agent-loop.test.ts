import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { analyze, streamAnalysis } from '../../src/agent/analyze.ts';
import { createOpenAIChatModel } from '../../src/agent/openai-chat-model.ts';
import { SandboxFailureError } from '../../src/errors/index.ts';
import { lastRoundAnswerRequest } from '../../src/agent/model-notes.ts';
import { traceDocumentSchema, type TraceRecord } from '../../src/trace/schema.ts';
import { startFakeOpenAIServer } from '../support/fake-openai-server.ts';
import { cellResult, createFakeSandbox, failedWith, printed, slowCell } from './support/fake-session.ts';
import { cleanUpHarness, eventTypes, makeRunsDir, makeWorkspace, runLoop } from './support/loop-harness.ts';

afterEach(cleanUpHarness);

const codeTurn = (code: string) => ({
  type: 'text' as const,
  text: `<Analyze>Next step.</Analyze>\n<Code>\n\`\`\`python\n${code}\n\`\`\`\n</Code>`,
});
const answerTurn = (answer: string) => ({
  type: 'text' as const,
  text: `<Understand>Seen.</Understand>\n<Answer>${answer}</Answer>`,
});

function recordsOf<T extends TraceRecord['type']>(trace: readonly TraceRecord[], type: T) {
  return trace.filter((record): record is Extract<TraceRecord, { type: T }> => record.type === type);
}

describe('agent loop with a fake model over HTTP', () => {
  it('runs a normal analysis to an answer and records it all (chat profile)', async () => {
    const run = await runLoop({
      server: { script: [codeTurn("print('south')"), answerTurn('South sells more (20 vs 10).')] },
      session: { run: () => printed('south\n') },
    });
    expect(run.result.termination.reason).toBe('answered');
    expect(run.result.answer).toBe('South sells more (20 vs 10).');
    expect(run.result.rounds).toBe(2);
    expect(run.result.usage.promptTokens).toBeGreaterThan(0);
    expect(run.sandbox.sessions[0]?.executed).toEqual(["print('south')"]);
    expect(run.sandbox.sessions[0]?.closed).toBe(true);

    const types = eventTypes(run.events);
    expect(types[0]).toBe('run-start');
    expect(types.at(-1)).toBe('run-end');
    for (const type of [
      'profile-end',
      'round-start',
      'text-delta',
      'step-end',
      'code-end',
      'execution-start',
      'execution-end',
      'answer-end',
    ]) {
      expect(types).toContain(type);
    }
    const deltaTags = new Set(
      run.events.flatMap((event) => (event.type === 'text-delta' ? [event.tag] : [])),
    );
    expect([...deltaTags].sort()).toEqual(['analyze', 'answer', 'code', 'understand']);

    // What the model was sent.
    const [first, second] = run.server.completionRequests;
    expect(first?.body?.stop).toEqual(['</Code>', '</Answer>', '</Ask>']);
    expect(first?.body?.messages?.map((message) => message.role)).toEqual(['system', 'user']);
    expect(first?.body?.messages?.[1]?.content).toMatch(
      /^# Instruction\nWhich region sells more\?\n\n# Data\nFile 1: \{"name":"sales.csv"/,
    );
    expect(second?.body?.messages?.map((message) => message.role)).toEqual([
      'system',
      'user',
      'assistant',
      'user',
    ]);
    expect(second?.body?.messages?.[2]?.content).toContain('</Code>');
    expect(second?.body?.messages?.[3]?.content).toBe('<Execute>\nsouth\n\n</Execute>');

    // The trace, line by line and as one document.
    expect(run.trace.map((record) => record.type)).toEqual([
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
      'turn-end',
      'run-end',
    ]);
    const start = recordsOf(run.trace, 'run-start')[0];
    expect(start?.workspace.files).toEqual([
      {
        path: 'sales.csv',
        sizeBytes: Buffer.byteLength('region,revenue\nnorth,10\nsouth,20\n'),
        sha256: createHash('sha256').update('region,revenue\nnorth,10\nsouth,20\n').digest('hex'),
      },
    ]);
    expect(start?.model).toMatchObject({ id: 'fake-model', profile: 'chat', offline: false });
    expect(recordsOf(run.trace, 'execution')[0]).toMatchObject({ outputId: 'E1', executeText: 'south\n' });
    expect(recordsOf(run.trace, 'run-end')[0]).toMatchObject({
      termination: { reason: 'answered' },
      answer: 'South sells more (20 vs 10).',
      rounds: 2,
    });
    const document = traceDocumentSchema.parse(
      JSON.parse(await readFile(path.join(run.runDir, 'trace.json'), 'utf8')),
    );
    expect(document.records).toEqual(run.trace);
  });

  it('talks to DeepAnalyze its own way: no system prompt, results in role execute', async () => {
    const run = await runLoop({
      server: { script: [codeTurn('print(1)'), answerTurn('1')] },
      session: { run: () => printed('1\n') },
      analyze: { profile: 'deepanalyze' },
    });
    expect(run.result.termination.reason).toBe('answered');
    const second = run.server.completionRequests[1];
    expect(second?.body?.messages?.map((message) => message.role)).toEqual(['user', 'assistant', 'execute']);
    expect(second?.body?.messages?.[2]?.content).toBe('1\n');
    expect(recordsOf(run.trace, 'run-start')[0]?.model.profile).toBe('deepanalyze');
  });

  it('stops at max rounds', async () => {
    const run = await runLoop({
      server: { script: [], whenExhausted: codeTurn('x = 1') },
      analyze: { maxRounds: 3 },
    });
    expect(run.result.termination).toMatchObject({ reason: 'max-rounds' });
    expect(run.result.rounds).toBe(3);
    expect(run.server.completionRequests).toHaveLength(3);
    // Before the last round the model was asked for its final answer.
    const last = run.server.completionRequests[2]?.body?.messages?.at(-1);
    expect(last?.content).toContain(lastRoundAnswerRequest);
    expect(recordsOf(run.trace, 'notice').map((notice) => notice.kind)).toContain('final-answer-request');
  });

  it('keeps the answer given when asked at the last round, and says the round limit ended the run', async () => {
    const run = await runLoop({
      server: { script: [codeTurn('x = 1'), codeTurn('x = 2'), answerTurn('x is 2.')] },
      analyze: { maxRounds: 3 },
    });
    expect(run.result.termination.reason).toBe('max-rounds');
    expect(run.result.answer).toBe('x is 2.');
  });

  it('stops at the wall-clock deadline, interrupting the running cell', async () => {
    const run = await runLoop({
      server: { script: [codeTurn('import time; time.sleep(60)')] },
      session: { run: (_code, _index, signal) => slowCell(60_000, signal) },
      analyze: { deadlineMs: 300 },
    });
    expect(run.result.termination.reason).toBe('deadline');
    expect(run.sandbox.sessions[0]?.closed).toBe(true);
    expect(recordsOf(run.trace, 'run-end')[0]?.termination.reason).toBe('deadline');
  });

  it('nudges a model that makes no progress, then stops', async () => {
    const run = await runLoop({
      server: {
        script: [],
        whenExhausted: { type: 'text', text: '<Analyze>Let me think about it.</Analyze>' },
      },
      analyze: { maxStalledTurns: 3 },
    });
    expect(run.result.termination.reason).toBe('no-progress');
    expect(run.result.rounds).toBe(3);
    const nudges = recordsOf(run.trace, 'notice').filter((notice) => notice.kind === 'nudge');
    expect(nudges.length).toBeGreaterThanOrEqual(2);
    expect(run.server.completionRequests[1]?.body?.messages?.at(-1)).toMatchObject({
      role: 'user',
      content: expect.stringContaining('<Code>'),
    });
  });

  it('nudges a model that repeats the same failing code, then stops with repeated-failure', async () => {
    const failing = "df['gender'].value_counts()";
    const run = await runLoop({
      server: { script: [], whenExhausted: codeTurn(failing) },
      session: { run: () => failedWith('KeyError', "'gender'") },
      analyze: { maxRepeatedFailures: 3 },
    });
    expect(run.result.termination.reason).toBe('repeated-failure');
    expect(run.sandbox.sessions[0]?.executed).toEqual([failing, failing, failing]);
    const third = run.server.completionRequests[2];
    expect(third?.body?.messages?.at(-1)?.content).toContain('The same code failed again (KeyError');
  });

  it('ends with model-unavailable after a 500 storm, with an error event', async () => {
    const run = await runLoop({
      server: { script: [codeTurn('print(1)')], whenExhausted: { type: 'error', status: 500 } },
      session: { run: () => printed('1\n') },
    });
    expect(run.result.termination.reason).toBe('model-unavailable');
    expect(run.events.find((event) => event.type === 'error')).toMatchObject({
      error: { code: 'MODEL_UNAVAILABLE' },
    });
    expect(run.server.completionRequests).toHaveLength(1 + 3);
    expect(recordsOf(run.trace, 'notice').filter((notice) => notice.kind === 'retry')).toHaveLength(2);
    expect(run.sandbox.sessions[0]?.closed).toBe(true);
  });

  it('ends with model-unavailable when the model does not exist (404)', async () => {
    const run = await runLoop({ server: { models: ['deepanalyze-8b'] } });
    expect(run.result.termination.reason).toBe('model-unavailable');
    expect(run.result.termination.detail).toContain('fake-model');
    expect(run.server.completionRequests).toHaveLength(1);
  });

  it('rides out a 429 and records the retry', async () => {
    const run = await runLoop({
      server: { script: [{ type: 'error', status: 429, retryAfter: '0' }, answerTurn('done')] },
    });
    expect(run.result.termination.reason).toBe('answered');
    expect(recordsOf(run.trace, 'notice').map((notice) => notice.kind)).toEqual(['retry']);
  });

  it('ends with cancelled when the caller aborts mid-cell, and closes the session', async () => {
    const controller = new AbortController();
    const run = await runLoop({
      server: { script: [codeTurn('import time; time.sleep(60)')] },
      session: { run: (_code, _index, signal) => slowCell(60_000, signal) },
      analyze: { signal: controller.signal },
      onEvent: (event) => {
        if (event.type === 'execution-start') setTimeout(() => controller.abort(), 20);
      },
    });
    expect(run.result.termination.reason).toBe('cancelled');
    expect(run.sandbox.sessions[0]?.closed).toBe(true);
    expect(recordsOf(run.trace, 'run-end')[0]?.termination.reason).toBe('cancelled');
  });

  it('ends with sandbox-failure when the sandbox breaks', async () => {
    const run = await runLoop({
      server: { script: [codeTurn('print(1)')] },
      session: { failOnCell: { index: 0, error: new SandboxFailureError('The container is gone.') } },
    });
    expect(run.result.termination).toMatchObject({
      reason: 'sandbox-failure',
      detail: 'The container is gone.',
    });
    expect(run.events.find((event) => event.type === 'error')).toBeDefined();
  });

  it('does not run code cut by the token limit mid-tag, tells the model, and goes on', async () => {
    const run = await runLoop({
      server: {
        script: [
          {
            type: 'text',
            text: '<Analyze>Plan.</Analyze>\n<Code>\n```python\nimport pandas as pd\ndf = pd.read_',
            finishReason: 'length',
          },
          answerTurn('Short answer.'),
        ],
      },
    });
    expect(run.result.termination.reason).toBe('answered');
    expect(run.sandbox.sessions[0]?.executed).toEqual([]);
    const step = recordsOf(run.trace, 'step').find((record) => record.kind === 'code');
    expect(step).toMatchObject({ closed: false, text: 'import pandas as pd\ndf = pd.read_' });
    expect(run.server.completionRequests[1]?.body?.messages?.at(-1)?.content).toContain(
      'token limit inside a <Code> block',
    );
  });

  it('keeps an answer cut by the token limit, with a warning', async () => {
    const run = await runLoop({
      server: {
        script: [{ type: 'text', text: '<Answer>South sells more, because', finishReason: 'length' }],
      },
    });
    expect(run.result).toMatchObject({
      answer: 'South sells more, because',
      termination: { reason: 'answered' },
    });
    expect(recordsOf(run.trace, 'step')[0]).toMatchObject({ kind: 'answer', closed: false });
    expect(recordsOf(run.trace, 'notice')[0]?.text).toContain('cut off by the token limit');
  });

  it('starts a turn over when the connection is cut mid-tag', async () => {
    const reply = '<Analyze>Plan.</Analyze>\n<Code>\nprint(1)\n</Code>';
    const run = await runLoop({
      server: {
        script: [
          { type: 'text', text: reply, cut: { afterChars: 30, how: 'reset' } },
          { type: 'text', text: reply },
          answerTurn('1'),
        ],
      },
      session: { run: () => printed('1\n') },
    });
    expect(run.result.termination.reason).toBe('answered');
    expect(eventTypes(run.events)).toContain('turn-restart');
    expect(run.sandbox.sessions[0]?.executed).toEqual(['print(1)']);
    expect(recordsOf(run.trace, 'model-turn')[0]?.text).toBe(reply);
  });

  it('runs several code blocks of one reply in order, and cuts a reply at an <Execute> the model wrote', async () => {
    const run = await runLoop({
      server: {
        script: [
          {
            type: 'text',
            honourStop: false,
            text: '<Code>a = 1</Code>\n<Code>print(a + 1)</Code>\n<Execute>\n2 (made up)\n</Execute>\n<Answer>made up</Answer>',
          },
          answerTurn('2'),
        ],
      },
      session: { run: (_code, index) => printed(index === 0 ? '' : '2\n') },
    });
    expect(run.sandbox.sessions[0]?.executed).toEqual(['a = 1', 'print(a + 1)']);
    expect(run.result.answer).toBe('2');
    expect(recordsOf(run.trace, 'model-turn')[0]?.text).toBe('<Code>a = 1</Code>\n<Code>print(a + 1)</Code>');
    expect(recordsOf(run.trace, 'notice').some((notice) => notice.text.includes('<Execute>'))).toBe(true);
    const feedback = run.server.completionRequests[1]?.body?.messages?.at(-1)?.content;
    expect(feedback).toBe('<Execute>\n\n</Execute>\n<Execute>\n2\n\n</Execute>');
  });

  it("cuts a reply where the parser saw the model's <Execute>, not at a later <execute> in the same chunk", async () => {
    const reply = '<Code>print(1)</Code>\n<Execute>\n1 (made up)\n</Execute>\nand then <execute> again';
    const run = await runLoop({
      server: {
        script: [{ type: 'text', honourStop: false, chunkChars: reply.length, text: reply }, answerTurn('1')],
      },
      session: { run: () => printed('1\n') },
    });
    expect(recordsOf(run.trace, 'model-turn')[0]?.text).toBe('<Code>print(1)</Code>');
    expect(run.server.completionRequests[1]?.body?.messages?.[2]?.content).toBe('<Code>print(1)</Code>');
  });

  it('caps long output (head and tail kept) and names the files and figures a cell produced', async () => {
    const long = Array.from({ length: 2000 }, (_, line) => `line ${line}`).join('\n');
    const run = await runLoop({
      server: { script: [codeTurn('big()'), answerTurn('ok')] },
      session: {
        run: () =>
          cellResult({
            stdout: { text: long, truncated: false, totalBytes: long.length },
            files: [{ path: 'out/chart.png', change: 'created', sizeBytes: 4 }],
            figures: [{ id: 'f1', mimeType: 'image/png', dataBase64: 'AA==', widthPx: 10, heightPx: 10 }],
          }),
        files: new Map([['out/chart.png', new Uint8Array([1, 2, 3, 4])]]),
      },
      analyze: { executeText: { maxChars: 2000 } },
    });
    const executeText = recordsOf(run.trace, 'execution')[0]?.executeText ?? '';
    expect(executeText.length).toBeLessThan(2400);
    expect(executeText.startsWith('line 0\n')).toBe(true);
    expect(executeText).toContain('characters of output omitted');
    expect(executeText).toContain('line 1999');
    expect(executeText).toContain('1 figure captured');
    expect(executeText).toContain('out/chart.png (created, 4 B)');

    const artifact = recordsOf(run.trace, 'artifact')[0];
    expect(artifact).toMatchObject({ outputId: 'E1', path: 'out/chart.png', sizeBytes: 4 });
    expect(artifact?.sha256).toBe(
      createHash('sha256')
        .update(new Uint8Array([1, 2, 3, 4]))
        .digest('hex'),
    );
    expect(await readFile(path.join(run.runDir, 'artifacts', 'out', 'chart.png'))).toEqual(
      Buffer.from([1, 2, 3, 4]),
    );
    expect(run.events.find((event) => event.type === 'artifact-saved')).toMatchObject({
      path: 'out/chart.png',
    });
  });

  it('compacts older outputs, asks once for the final answer near the context budget, and ends with context-budget', async () => {
    const output = 'x'.repeat(6000);
    const run = await runLoop({
      server: { script: [], whenExhausted: codeTurn('show()') },
      session: { run: () => printed(output) },
      analyze: { contextBudgetTokens: 6000, replyReserveTokens: 500, maxRounds: 20 },
    });
    expect(run.result.termination.reason).toBe('context-budget');
    expect(run.result.answer).toBeNull();
    const kinds = recordsOf(run.trace, 'notice').map((notice) => notice.kind);
    expect(kinds).toContain('compaction');
    expect(kinds.filter((kind) => kind === 'final-answer-request')).toHaveLength(1);
    // The request was the last thing the model saw, and its code after it was not run.
    const last = run.server.completionRequests.at(-1);
    expect(last?.body?.messages?.at(-1)?.content).toContain('Write your final <Answer> now');
    const executions = recordsOf(run.trace, 'execution').length;
    expect(executions).toBe(run.result.rounds - 1);
    // Code and reasoning were kept whole; older outputs were shortened.
    const assistantMessages = last?.body?.messages?.filter((message) => message.role === 'assistant') ?? [];
    expect(assistantMessages.every((message) => message.content.includes('show()'))).toBe(true);
    expect(
      last?.body?.messages?.some((message) => message.content.includes('characters of output omitted')),
    ).toBe(true);
  });

  it('keeps the answer given after the final-answer request (termination context-budget)', async () => {
    const output = 'y'.repeat(20_000);
    const run = await runLoop({
      server: { script: [codeTurn('show()'), answerTurn('Final from what I saw.')] },
      session: { run: () => printed(output) },
      analyze: { contextBudgetTokens: 6000, replyReserveTokens: 500, executeText: { maxChars: 30_000 } },
    });
    expect(run.result.termination.reason).toBe('context-budget');
    expect(run.result.answer).toBe('Final from what I saw.');
  });

  it('ends the trace with cancelled when the caller stops reading, and closes the session', async () => {
    const server = await startFakeOpenAIServer({ script: [codeTurn('print(1)'), answerTurn('1')] });
    const sandbox = createFakeSandbox({ run: () => printed('1\n') });
    const workspaceDir = await makeWorkspace();
    const outDir = path.join(await makeRunsDir(), 'run');
    try {
      for await (const event of streamAnalysis({
        instruction: 'x',
        workspaceDir,
        model: createOpenAIChatModel({ baseUrl: server.baseUrl, model: 'm' }),
        createSandbox: sandbox.factory,
        outDir,
      })) {
        if (event.type === 'code-end') break;
      }
      expect(sandbox.sessions[0]?.closed).toBe(true);
      const document = traceDocumentSchema.parse(
        JSON.parse(await readFile(path.join(outDir, 'trace.json'), 'utf8')),
      );
      expect(document.records.at(-1)).toMatchObject({
        type: 'run-end',
        termination: { reason: 'cancelled' },
      });
    } finally {
      await server.close();
    }
  });

  it('analyze() returns the result; a missing workspace throws before anything is written', async () => {
    const server = await startFakeOpenAIServer({ script: [answerTurn('42')] });
    const sandbox = createFakeSandbox();
    const workspaceDir = await makeWorkspace();
    const runsDir = await makeRunsDir();
    const model = createOpenAIChatModel({ baseUrl: server.baseUrl, model: 'm' });
    try {
      const result = await analyze({
        instruction: 'x',
        workspaceDir,
        model,
        createSandbox: sandbox.factory,
        outDir: path.join(runsDir, 'run-a'),
      });
      expect(result).toMatchObject({ answer: '42', termination: { reason: 'answered' }, rounds: 1 });
      const missingOut = path.join(runsDir, 'run-b');
      await expect(
        analyze({
          instruction: 'x',
          workspaceDir: '/nonexistent/folder',
          model,
          createSandbox: sandbox.factory,
          outDir: missingOut,
        }),
      ).rejects.toMatchObject({ code: 'WORKSPACE_INVALID' });
      expect(existsSync(missingOut)).toBe(false);
    } finally {
      await server.close();
    }
  });
});
