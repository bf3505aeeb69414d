import { afterEach, describe, expect, it, vi } from 'vitest';
import { CancelledError } from '../../src/errors/index.ts';
import type { CellResult } from '../../src/sandbox/cell-result.ts';
import { KernelConnection } from '../../src/sandbox/kernel-connection.ts';
import { KernelSession } from '../../src/sandbox/kernel-session.ts';
import { defaultSandboxLimits } from '../../src/sandbox/sandbox-limits.ts';
import { cellResult } from '../support/cell-result.ts';
import { fakeKernel, readyMessage } from './support/fake-kernel.ts';

function okResult(value: string): CellResult {
  return cellResult({ value });
}

/** Lets stream events and promise callbacks run. */
const settle = () => vi.advanceTimersByTimeAsync(0);

async function openSession() {
  const fake = fakeKernel();
  const connection = new KernelConnection(fake.kernel);
  fake.reply(readyMessage);
  await connection.ready;
  const limits = { ...defaultSandboxLimits, cellTimeoutMs: 120_000, interruptGraceMs: 5_000 };
  const session = new KernelSession('s1', 'docker', limits, fake.kernel, connection);
  const codes = () =>
    fake.sent.filter((message) => message['type'] === 'execute').map((message) => message['code']);
  const idOf = (code: string) => fake.sent.find((message) => message['code'] === code)?.['id'];
  return { ...fake, connection, session, codes, idOf };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('KernelSession runs one job at a time', () => {
  it('does not fail the session when a second cell waits behind a long first one (its answer timer starts when it is sent)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { session, connection, reply, codes, idOf } = await openSession();
    const first = session.execute('slow()');
    const second = session.execute('quick()');
    await settle();
    expect(codes()).toEqual(['slow()']);
    // The first cell uses nearly its whole budget (120 s + 2 × 5 s + 60 s = 190 s)...
    await vi.advanceTimersByTimeAsync(185_000);
    reply({ type: 'result', id: idOf('slow()'), result: okResult('1') });
    await expect(first).resolves.toMatchObject({ value: '1' });
    await settle();
    expect(codes()).toEqual(['slow()', 'quick()']);
    // ...and the second one answers at 245 s, past a budget counted from the call.
    await vi.advanceTimersByTimeAsync(60_000);
    reply({ type: 'result', id: idOf('quick()'), result: okResult('2') });
    await expect(second).resolves.toMatchObject({ value: '2' });
    expect(connection.failed).toBeUndefined();
  });

  it('never sends a job aborted while it waits, and does not let the next one overtake the running one', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { session, reply, codes, idOf, sent } = await openSession();
    const controller = new AbortController();
    const first = session.execute('first()');
    const aborted = session.execute('aborted()', { signal: controller.signal });
    const third = session.profileWorkspace();
    controller.abort();
    await expect(aborted).rejects.toBeInstanceOf(CancelledError);
    await settle();
    expect(codes()).toEqual(['first()']);
    expect(sent.some((message) => message['type'] === 'profile')).toBe(false);
    reply({ type: 'result', id: idOf('first()'), result: okResult('1') });
    await expect(first).resolves.toMatchObject({ value: '1' });
    await settle();
    const profile = sent.find((message) => message['type'] === 'profile');
    expect(profile).toBeDefined();
    reply({ type: 'profile', id: profile?.['id'], profile: { files: [], truncated: false } });
    await expect(third).resolves.toEqual({ files: [], truncated: false });
    expect(codes()).toEqual(['first()']);
  });

  it('lets the next job go as soon as the running one is aborted (the kernel stops it, then runs the next)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { session, reply, codes, idOf, sent } = await openSession();
    const controller = new AbortController();
    const running = session.execute('running()', { signal: controller.signal });
    const next = session.execute('next()');
    await settle();
    controller.abort();
    await expect(running).rejects.toBeInstanceOf(CancelledError);
    await settle();
    expect(sent.find((message) => message['type'] === 'cancel')?.['target']).toBe(idOf('running()'));
    expect(codes()).toEqual(['running()', 'next()']);
    reply({ type: 'result', id: idOf('next()'), result: okResult('ok') });
    await expect(next).resolves.toMatchObject({ value: 'ok' });
  });
});
