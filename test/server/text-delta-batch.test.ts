import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/agent/index.ts';
import { TextDeltaBatch } from '../../src/server/text-delta-batch.ts';

type TextDelta = Extract<AgentEvent, { type: 'text-delta' }>;
const delta = (text: string, tag: TextDelta['tag'] = 'analyze', round = 1): TextDelta => ({
  type: 'text-delta',
  round,
  tag,
  text,
});
const nextLoopTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('TextDeltaBatch', () => {
  it('joins the deltas of one burst per round and tag, in order, and sends them at the next loop turn', async () => {
    const sent: TextDelta[] = [];
    const batch = new TextDeltaBatch((event) => sent.push(event));
    batch.add(delta('Look '));
    batch.add(delta('at it.'));
    batch.add(delta('print(1)', 'code'));
    batch.add(delta('x', 'code', 2));
    // A delta of another tag or round sends the batch before it; the last waits for the loop turn.
    expect(sent).toEqual([delta('Look at it.'), delta('print(1)', 'code')]);
    await nextLoopTurn();
    expect(sent).toEqual([delta('Look at it.'), delta('print(1)', 'code'), delta('x', 'code', 2)]);
    // Pieces that come in separate loop turns (a model streaming over the network) stay apart.
    batch.add(delta('a'));
    await nextLoopTurn();
    batch.add(delta('b'));
    batch.flush();
    expect(sent.slice(3).map((event) => event.text)).toEqual(['a', 'b']);
    await nextLoopTurn();
    expect(sent).toHaveLength(5);
  });

  it('keeps a joined event to 16 KiB of text', () => {
    const sent: TextDelta[] = [];
    const batch = new TextDeltaBatch((event) => sent.push(event));
    for (let index = 0; index < 40; index += 1) batch.add(delta('x'.repeat(1024)));
    batch.flush();
    expect(sent.map((event) => event.text.length)).toEqual([16_384, 16_384, 8_192]);
  });
});
