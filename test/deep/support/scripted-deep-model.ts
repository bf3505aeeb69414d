import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { onTestFinished } from 'vitest';
import type { FakeReply, RecordedRequest } from '../../support/fake-openai-server.ts';

/**
 * A scripted model for deep runs over the fake OpenAI server. Requests of a
 * deep run arrive in an order that depends on which sub-analysis is faster,
 * so replies are chosen by what a request is (its role's system prompt, the
 * sub-question in a sub-analyst's first message, how many replies it has
 * already had), not by its place in the order.
 */

export type RoleName = 'scope' | 'supervise' | 'plan' | 'write' | 'sub-analyst';

export function roleOf(request: RecordedRequest): RoleName {
  const system = request.body?.messages?.find((message) => message.role === 'system')?.content ?? '';
  if (system.startsWith('You plan a data analysis')) return 'scope';
  if (system.startsWith('You lead a team')) return 'supervise';
  if (system.startsWith('You outline')) return 'plan';
  if (system.startsWith('You write one section')) return 'write';
  return 'sub-analyst';
}

const messagesOf = (request: RecordedRequest) => request.body?.messages ?? [];
export const firstUserMessage = (request: RecordedRequest) =>
  messagesOf(request).find((message) => message.role === 'user')?.content ?? '';
export const lastUserMessage = (request: RecordedRequest) =>
  messagesOf(request).findLast((message) => message.role === 'user')?.content ?? '';
const assistantCount = (request: RecordedRequest) =>
  messagesOf(request).filter((message) => message.role === 'assistant').length;

export const text = (body: string, extra: Partial<Extract<FakeReply, { type: 'text' }>> = {}): FakeReply => ({
  type: 'text',
  text: body,
  ...extra,
});
export const json = (value: unknown): FakeReply => text(`<Answer>\n${JSON.stringify(value)}\n</Answer>`);

/** One scripted sub-analyst: picked by a phrase of its sub-question. */
export interface ScriptedSubAnalyst {
  /** Found in the sub-question (the first user message of its thread). */
  match: string;
  /** Its replies, one per round: code, then the answer. A function sees the request. */
  turns: (FakeReply | ((request: RecordedRequest) => FakeReply))[];
  /** Its reply to the compress question. */
  compress?: FakeReply;
}

export interface DeepScript {
  subQuestions: { question: string; tables: string[] }[];
  subAnalysts: ScriptedSubAnalyst[];
  /** The planner: sees the evidence bank in the request (e.g. to cite ids by claim). */
  plan: (request: RecordedRequest) => FakeReply;
  write: (request: RecordedRequest) => FakeReply;
}

/** Evidence ids and claims as the planner's request lists them (`EV1 (from S1; …): claim`). */
export function evidenceInRequest(request: RecordedRequest): { id: string; claim: string }[] {
  const message = lastUserMessage(request);
  return [...message.matchAll(/^(EV\d+) \(from S\d+[^)]*\): (.*)$/gm)].map((match) => ({
    id: match[1] ?? '',
    claim: match[2] ?? '',
  }));
}

export function deepScript(script: DeepScript): (request: RecordedRequest) => FakeReply {
  return (request) => {
    switch (roleOf(request)) {
      case 'scope':
        return json({
          questions: script.subQuestions,
          goodAnswer: 'Each finding with its number.',
        });
      case 'supervise':
        return json({ subQuestions: script.subQuestions });
      case 'plan':
        return script.plan(request);
      case 'write':
        return script.write(request);
      case 'sub-analyst': {
        // The sub-question is the instruction's first line (the rest names the whole run's question).
        const first = /# Instruction\n(.*)/.exec(firstUserMessage(request))?.[1] ?? '';
        const analyst = script.subAnalysts.find((candidate) => first.includes(candidate.match));
        if (analyst === undefined) return { type: 'error', status: 500, message: 'no scripted sub-analyst' };
        if (lastUserMessage(request).startsWith('Now compress your findings')) {
          return analyst.compress ?? json({ evidence: [] });
        }
        const turn = analyst.turns[Math.min(assistantCount(request), analyst.turns.length - 1)];
        if (turn === undefined) return { type: 'error', status: 500, message: 'no scripted turn' };
        return typeof turn === 'function' ? turn(request) : turn;
      }
    }
  };
}

export const codeReply = (code: string, extra: Partial<Extract<FakeReply, { type: 'text' }>> = {}) =>
  text(`<Analyze>Compute it.</Analyze>\n<Code>\n${code}\n</Code>`, extra);
export const answerReply = (answer: string) => text(`<Answer>${answer}</Answer>`);

/** Two small tables: sales (revenue by region) and costs; removed when the test that made it ends. */
export async function deepWorkspace(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-deep-ws-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  await writeFile(
    path.join(dir, 'sales.csv'),
    'region,revenue\nNorth,1200.25\nSouth,830.5\nNorth,1040.75\nSouth,612.0\n',
  );
  await writeFile(path.join(dir, 'costs.csv'), 'item,cost\nrent,1500\nstaff,2750\nads,415.5\n');
  return dir;
}
