import { afterEach, describe, expect, it } from 'vitest';
import { createOpenAIChatModel, type TurnResult } from '../../src/agent/index.ts';
import {
  createModelDeepRoles,
  DeepRoleError,
  parseJsonReply,
  type Brief,
  type RoleContext,
} from '../../src/deep/index.ts';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../support/fake-openai-server.ts';
import { testProfile } from '../agent/support/fake-session.ts';
import { z } from 'zod';

/** The model roles over real HTTP (the fake OpenAI server): prompts, zod-read replies, one repair, named failures. */

let server: FakeOpenAIServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

const brief: Brief = {
  question: 'Report on sales.',
  questions: [{ question: 'Revenue by region?', tables: ['sales.csv'] }],
  goodAnswer: 'Numbers by region.',
};

function context(): RoleContext & { tokens: number } {
  const state = {
    tokens: 0,
    signal: new AbortController().signal,
    onUsage: (usage: { promptTokens: number; completionTokens: number }) => {
      state.tokens += usage.promptTokens + usage.completionTokens;
    },
  };
  return state;
}

async function rolesFor(...replies: string[]) {
  server = await startFakeOpenAIServer({ script: replies.map((text) => ({ type: 'text' as const, text })) });
  return createModelDeepRoles(
    createOpenAIChatModel({ baseUrl: server.baseUrl, model: 'fake-model', retry: { maxRetries: 0 } }),
  );
}

describe('model roles', () => {
  it('scope: a reply that does not parse gets one repair saying what was wrong', async () => {
    const roles = await rolesFor(
      '<Answer>{"questions": []}</Answer>',
      '<Answer>\n```json\n{"questions": [{"question": "Revenue by region?", "tables": ["sales.csv"]}], "goodAnswer": "Numbers."}\n```\n</Answer>',
    );
    const roleContext = context();
    const scoped = await roles.scope(
      { question: 'Report on sales.', profile: testProfile, mayAsk: false },
      roleContext,
    );
    expect(scoped).toEqual({
      brief: {
        question: 'Report on sales.',
        questions: [{ question: 'Revenue by region?', tables: ['sales.csv'] }],
        goodAnswer: 'Numbers.',
      },
    });
    const [first, repair] = server?.completionRequests ?? [];
    // The profile went in (computed in the sandbox), and the repair says what was wrong.
    expect(first?.body?.messages?.[1]?.content).toContain('sales.csv');
    expect(repair?.body?.messages?.at(-1)?.content).toMatch(/could not be read: the JSON does not match/);
    expect(roleContext.tokens).toBeGreaterThan(0);
  });

  it('scope may ask only where someone can answer', async () => {
    const asking = await rolesFor('<Answer>{"ask": "Which year?"}</Answer>');
    expect(await asking.scope({ question: 'x', profile: testProfile, mayAsk: true }, context())).toEqual({
      ask: 'Which year?',
    });
  });

  it('a second unreadable reply is a DeepRoleError naming the role', async () => {
    const roles = await rolesFor('no json here', '<Answer>{"subQuestions": "nope"}</Answer>');
    const failure = await roles.supervise({ brief, profile: testProfile, maxSubAnalyses: 2 }, context()).then(
      () => null,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(DeepRoleError);
    expect(failure).toMatchObject({ code: 'DEEP_ROLE_FAILED', role: 'supervise' });
  });

  it('supervise keeps at most the budget; plan drops gaps on its final round; write returns the markdown', async () => {
    const roles = await rolesFor(
      '<Answer>{"subQuestions": [{"question": "a"}, {"question": "b"}, {"question": "c"}]}</Answer>',
      '<Answer>{"sections": [{"title": "One", "evidenceIds": ["EV1"]}], "gaps": [{"question": "more?"}]}</Answer>',
      '<Answer>North leads [EV1].</Answer>',
    );
    expect(await roles.supervise({ brief, profile: testProfile, maxSubAnalyses: 2 }, context())).toEqual([
      { question: 'a', tables: [] },
      { question: 'b', tables: [] },
    ]);
    expect(await roles.plan({ brief, evidence: [], round: 2, maxRounds: 2 }, context())).toEqual({
      sections: [{ title: 'One', purpose: '', evidenceIds: ['EV1'] }],
      gaps: [],
    });
    const evidence = [
      { id: 'EV1', subAnalysisId: 'S1', claim: 'North 12.5.', numbers: [], outputs: ['S1:E1'], figures: [] },
    ];
    const section = { id: 'SEC1', title: 'One', purpose: 'p', evidenceIds: ['EV1'] };
    expect(await roles.write({ brief, section, evidence }, context())).toBe('North leads [EV1].');
    expect(server?.completionRequests[2]?.body?.messages?.[1]?.content).toContain(
      'EV1 (from S1; outputs S1:E1): North 12.5.',
    );
  });

  it("compress asks the sub-analyst's own thread, and repairs once", async () => {
    const roles = await rolesFor();
    const asked: string[] = [];
    const answers = ['not json', '{"evidence": [{"claim": "North 12.5.", "outputs": ["E1"]}]}'];
    const turn = (answer: string | undefined): TurnResult => ({
      turn: 2,
      question: '',
      answer: answer ?? null,
      ask: null,
      termination: { reason: 'answered', detail: '' },
      rounds: 1,
      usage: { promptTokens: 5, completionTokens: 5 },
      durationMs: 1,
      outputIds: [],
      artifacts: [],
    });
    const roleContext = context();
    const drafts = await roles.compress(
      {
        subQuestion: { id: 'S1', question: 'q', tables: [], round: 0 },
        result: turn('done'),
        executions: [],
        askFollowUp: async (question) => {
          asked.push(question);
          return turn(answers[asked.length - 1]);
        },
      },
      roleContext,
    );
    expect(drafts).toEqual([{ claim: 'North 12.5.', outputs: ['E1'], figures: [] }]);
    expect(asked[0]).toMatch(/^Now compress your findings/);
    expect(asked[1]).toMatch(/could not be read/);
    expect(roleContext.tokens).toBe(20);
  });

  it('reads JSON from a fence, from braces, and says why not', () => {
    const schema = z.object({ a: z.number() });
    expect(parseJsonReply('<Answer>```json\n{"a": 1}\n```</Answer>', schema)).toEqual({
      ok: true,
      value: { a: 1 },
    });
    expect(parseJsonReply('Here: {"a": 2} done', schema)).toEqual({ ok: true, value: { a: 2 } });
    expect(parseJsonReply('<Answer>{"a": "x"}</Answer>', schema)).toMatchObject({ ok: false });
    expect(parseJsonReply('<Answer>nothing</Answer>', schema)).toEqual({
      ok: false,
      problem: 'no JSON object was found',
    });
  });
});
