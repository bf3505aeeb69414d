import { describe, expect, it } from 'vitest';
import { parseSteps } from '../../src/agent/tag-parser.ts';
import type { ModelChunk, ModelRequest } from '../../src/agent/language-model.ts';
import { createOfflineAnalyst, offlineAnalystTurn } from '../../src/agent/offline-analyst/index.ts';
import { CancelledError, DatalystError } from '../../src/errors/index.ts';
import { column, csvFile, firstMessage, healthyKernel, runCanned } from './support/canned-conversation.ts';
import { numbersMissingFrom } from './support/answer-numbers.ts';

const files = [csvFile('it\'s "odd"\nname.csv', [column('price', 'number'), column('shop', 'category')])];
const first = firstMessage('Show the top 5 shops by price in 2024.', files);

async function collect(request: ModelRequest, chunkChars = 64): Promise<ModelChunk[]> {
  const chunks: ModelChunk[] = [];
  for await (const chunk of createOfflineAnalyst({ chunkChars }).stream(request)) chunks.push(chunk);
  return chunks;
}

describe('the offline analyst as a LanguageModel', () => {
  it('is labelled as the offline analyst, not a model', () => {
    const model = createOfflineAnalyst();
    expect(model.id).toBe('datalyst-offline-analyst');
    expect(model.offline).toBe(true);
  });

  it('streams one turn in small text deltas, then zero usage and a stop', async () => {
    const request: ModelRequest = {
      messages: [{ role: 'user', content: first }],
      stop: ['</Code>', '</Answer>'],
    };
    const chunks = await collect(request, 40);
    const deltas = chunks.flatMap((chunk) => (chunk.type === 'text-delta' ? [chunk.text] : []));
    expect(deltas.length).toBeGreaterThan(5);
    expect(deltas.every((delta) => delta.length <= 40)).toBe(true);
    expect(deltas.join('')).toBe(offlineAnalystTurn(request));
    expect(chunks.slice(-2)).toEqual([
      { type: 'usage', promptTokens: 0, completionTokens: 0 },
      { type: 'finish', reason: 'stop' },
    ]);
  });

  it('writes turns the tag parser reads as an Analyze step and a closed Code step', () => {
    const steps = parseSteps(offlineAnalystTurn({ messages: [{ role: 'user', content: first }] }));
    expect(steps.map((step) => [step.kind, step.closed])).toEqual([
      ['analyze', true],
      ['code', true],
    ]);
    expect(steps[1]?.text.split('\n')[0]).toBe('# offline-analyst step: setup');
  });

  it('puts file names into the code as string literals, never as code', () => {
    const run = runCanned(first, healthyKernel({}));
    const load = run.turns.find((turn) => turn.includes('# offline-analyst step: load')) ?? '';
    expect(load).toContain(
      `("it's \\"odd\\"\\nname.csv", "", "pd.read_csv(\\"it's \\\\\\"odd\\\\\\"\\\\nname.csv\\")"),`,
    );
  });

  it('stops when the signal is aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const request: ModelRequest = {
      messages: [{ role: 'user', content: first }],
      stop: [],
      signal: controller.signal,
    };
    const failure = await collect(request).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(CancelledError);
    expect(DatalystError.isInstance(failure)).toBe(true);
  });

  it('gives the same turns for the same conversation', () => {
    const once = runCanned(first, healthyKernel({}));
    const twice = runCanned(first, healthyKernel({}));
    expect(twice.turns).toEqual(once.turns);
  });
});

describe('the Answer', () => {
  const run = runCanned(first, healthyKernel({ kinds: { number: 1, category: 1 } }));
  const outputs = run.messages
    .filter((message) => message.role === 'execute')
    .map((message) => message.content);

  it('quotes the printed findings and states no number of its own', () => {
    expect(run.answer).toContain('- outliers found 42 things (12.5%).');
    expect(numbersMissingFrom(run.answer ?? '', outputs)).toEqual([]);
  });

  it('does not repeat the instruction (its numbers were never printed)', () => {
    expect(run.answer).not.toContain('top 5');
    expect(run.answer).not.toContain('2024');
  });

  it('says that no language model was used', () => {
    expect(run.answer).toMatch(/^\*\*No language model was used\.\*\*/);
    expect(run.turns.at(-1)).toMatch(/^<Understand>[\s\S]*<\/Understand>\n<Answer>[\s\S]*<\/Answer>$/);
  });
});
