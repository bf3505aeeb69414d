import { afterEach, describe, expect, it } from 'vitest';
import { parseSteps } from '../../src/agent/tag-parser.ts';
import { completeUnclosedCodeNotice } from '../../src/agent/complete-code.ts';
import { createModel } from '../../src/cli/model-factory.ts';
import { startFakeOpenAIServer } from '../support/fake-openai-server.ts';
import { printed } from './support/fake-session.ts';
import { cleanUpHarness, runLoop } from './support/loop-harness.ts';

/**
 * What DeepAnalyze's own API server does, as its recorded (streaming)
 * transcripts show: a turn that ends inside an unclosed <Code> after a closed
 * fence is run (the server appends </Code>); a model-written <Execute> after
 * such a fence ends the code step; its default temperature is 0.4.
 */
afterEach(cleanUpHarness);

const fencedCode = "<Analyze>Load it.</Analyze>\n<Code>\n```python\nprint('north')\n```\n";

describe('the tag parser on DeepAnalyze turns', () => {
  it('ends an unclosed code step at a model-written <Execute> after a closed fence', () => {
    const steps = parseSteps(`${fencedCode}<Execute>\nnorth 99\n</Execute>\n<Answer>North (99).</Answer>`);
    expect(steps.map((step) => [step.kind, step.closed])).toEqual([
      ['analyze', true],
      ['code', false],
      ['execute', true],
      ['answer', true],
    ]);
    expect(steps[1]?.text).toBe("print('north')");
    expect(steps[1]?.fenceOpen).toBe(false);
  });

  it('keeps <Execute> as code text while the fence is open', () => {
    const steps = parseSteps("<Code>\n```python\ns = '<Execute>'\n```\n</Code>");
    expect(steps).toHaveLength(1);
    expect(steps[0]?.text).toBe("s = '<Execute>'");
    expect(steps[0]?.closed).toBe(true);
  });
});

describe('the loop on an unclosed <Code> with a closed fence', () => {
  it('runs it at a stop finish (stop_reason null: the end-of-turn token), with a notice', async () => {
    const run = await runLoop({
      server: {
        script: [
          { type: 'text', text: fencedCode, finishReason: 'stop', sendStopReason: true },
          { type: 'text', text: '<Answer>North.</Answer>' },
        ],
      },
      session: { run: () => printed('north\n') },
    });
    expect(run.sandbox.sessions[0]?.executed).toEqual(["print('north')"]);
    expect(run.result.termination.reason).toBe('answered');
    const notices = run.trace.flatMap((record) => (record.type === 'notice' ? [record.text] : []));
    expect(notices).toContain(completeUnclosedCodeNotice);
    // The next request shows the code closed, as DeepAnalyze's server sends it.
    const second = run.server.completionRequests[1]?.body?.messages ?? [];
    expect(second.some((message) => String(message.content).endsWith('```\n</Code>'))).toBe(true);
  });

  it('runs it when the model goes on to invent an <Execute>, and drops the invented part', async () => {
    const run = await runLoop({
      server: {
        script: [
          {
            type: 'text',
            text: `${fencedCode}<Execute>\nnorth 99\n</Execute>\n<Answer>North (99).</Answer>`,
          },
          { type: 'text', text: '<Answer>North.</Answer>' },
        ],
      },
      session: { run: () => printed('north\n') },
    });
    expect(run.sandbox.sessions[0]?.executed).toEqual(["print('north')"]);
    expect(run.result.answer).toBe('North.');
  });

  it('does not run code cut by the token limit', async () => {
    const run = await runLoop({
      server: {
        script: [
          { type: 'text', text: fencedCode, finishReason: 'length' },
          { type: 'text', text: '<Answer>Stopped.</Answer>' },
        ],
      },
      session: { run: () => printed('north\n') },
    });
    expect(run.sandbox.sessions[0]?.executed).toEqual([]);
  });
});

describe('the deepanalyze profile', () => {
  it("sends DeepAnalyze's default temperature 0.4; the chat profile sends none", async () => {
    const server = await startFakeOpenAIServer({
      script: [
        { type: 'text', text: 'a' },
        { type: 'text', text: 'b' },
      ],
    });
    try {
      for (const profile of ['deepanalyze', 'chat'] as const) {
        const model = createModel({
          kind: 'endpoint',
          id: 'm',
          baseUrl: server.baseUrl,
          apiKey: null,
          profile,
        });
        for await (const chunk of model.stream({ messages: [{ role: 'user', content: 'hi' }], stop: [] }))
          void chunk;
      }
      expect(server.completionRequests.map((request) => request.body?.temperature)).toEqual([0.4, undefined]);
    } finally {
      await server.close();
    }
  });
});
