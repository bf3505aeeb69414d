import { describe, expect, it } from 'vitest';
import { SpareTime } from '../../src/server/spare-time.ts';
import { TurnQueue } from '../../src/server/turn-queue.ts';

/** A task that records its start and ends when `finish` is called. */
function heldTask(log: string[], name: string): { task: () => Promise<void>; finish: () => void } {
  let finish = (): void => undefined;
  const ended = new Promise<void>((resolve) => (finish = resolve));
  return {
    task: async () => {
      log.push(`start ${name}`);
      await ended;
      log.push(`end ${name}`);
    },
    finish: () => finish(),
  };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

function spareBehind(queue: TurnQueue): SpareTime {
  const spare = new SpareTime(() => queue.hasFreeSlot);
  queue.onSlotFreed(() => spare.slotFreed());
  return spare;
}

describe('spare time (work ahead of need, behind the turn queue)', () => {
  it('waits while every turn slot is taken, also while a waiting turn takes a freed one, and runs once a slot is free', async () => {
    const queue = new TurnQueue({ maxRunning: 1, maxQueued: 2, retryAfterSeconds: 1 });
    const spare = spareBehind(queue);
    const signal = new AbortController().signal;
    const releaseFirst = await queue.reserve().whenStarted(signal);
    const second = queue.reserve().whenStarted(signal);
    const log: string[] = [];
    const chart = heldTask(log, 'chart');
    spare.add('thread-a', chart.task);
    await settle();
    expect(log).toEqual([]);
    expect(spare.waiting).toBe(1);
    // The first turn ends: its slot goes straight to the waiting turn, so no slot is free yet.
    releaseFirst();
    const releaseSecond = await second;
    await settle();
    expect(log).toEqual([]);
    releaseSecond();
    await settle();
    expect(log).toEqual(['start chart']);
    expect(spare.waiting).toBe(0);
    chart.finish();
    await settle();
    expect(log).toEqual(['start chart', 'end chart']);
  });

  it('runs one task at a time, in order, and a task that fails does not stop the next', async () => {
    const queue = new TurnQueue({ maxRunning: 2, maxQueued: 0, retryAfterSeconds: 1 });
    const spare = spareBehind(queue);
    const log: string[] = [];
    const first = heldTask(log, 'first');
    spare.add('a', first.task);
    spare.add('a', () => Promise.reject(new Error('a chart that fails')));
    const third = heldTask(log, 'third');
    spare.add('b', third.task);
    await settle();
    expect(log).toEqual(['start first']);
    first.finish();
    await settle();
    await settle();
    expect(log).toEqual(['start first', 'end first', 'start third']);
    third.finish();
    await settle();
    expect(spare.waiting).toBe(0);
  });

  it("drops a deleted thread's waiting tasks, and waits for its running one to end", async () => {
    const queue = new TurnQueue({ maxRunning: 1, maxQueued: 0, retryAfterSeconds: 1 });
    const spare = spareBehind(queue);
    const log: string[] = [];
    const running = heldTask(log, 'a1');
    spare.add('a', running.task);
    spare.add('a', heldTask(log, 'a2').task);
    const other = heldTask(log, 'b1');
    spare.add('b', other.task);
    await settle();
    let dropped = false;
    const drop = spare.drop('a').then(() => (dropped = true));
    await settle();
    expect(dropped).toBe(false);
    expect(spare.waiting).toBe(1);
    running.finish();
    await drop;
    await settle();
    // a2 never ran; b's task went on.
    expect(log).toEqual(['start a1', 'end a1', 'start b1']);
    other.finish();
  });

  it('a cancelled reservation that held a slot frees it for the waiting work', async () => {
    const queue = new TurnQueue({ maxRunning: 1, maxQueued: 0, retryAfterSeconds: 1 });
    const spare = spareBehind(queue);
    const reservation = queue.reserve();
    const log: string[] = [];
    const chart = heldTask(log, 'chart');
    spare.add('a', chart.task);
    await settle();
    expect(log).toEqual([]);
    reservation.cancel();
    await settle();
    expect(log).toEqual(['start chart']);
    chart.finish();
  });
});
