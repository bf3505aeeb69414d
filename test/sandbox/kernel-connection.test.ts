import { describe, expect, it } from 'vitest';
import { CancelledError, SandboxFailureError } from '../../src/errors/index.ts';
import { KernelConnection } from '../../src/sandbox/kernel-connection.ts';
import type { OutputChunk } from '../../src/sandbox/index.ts';
import { fakeKernel, readyMessage } from './support/fake-kernel.ts';

const ready = readyMessage;
const tick = () => new Promise((resolve) => setImmediate(resolve));

/** A kernel that answered `ready`, and a ping waiting for its answer. */
async function waitingPing() {
  const fake = fakeKernel();
  const connection = new KernelConnection(fake.kernel);
  fake.reply(ready);
  await connection.ready;
  const waiting = connection.request({ type: 'ping' });
  await tick();
  const id = fake.sent.at(-1)?.['id'];
  return { ...fake, connection, waiting, id };
}

describe('KernelConnection', () => {
  it('hands the kernel a fresh 32-byte session key as its first line, on stdin', async () => {
    const first = fakeKernel();
    const second = fakeKernel();
    const lines: string[][] = [[], []];
    first.kernel.stdin.on('data', (chunk: Buffer) => lines[0]?.push(chunk.toString()));
    second.kernel.stdin.on('data', (chunk: Buffer) => lines[1]?.push(chunk.toString()));
    new KernelConnection(first.kernel);
    new KernelConnection(second.kernel);
    await tick();
    const keys = lines.map(
      (chunks) => JSON.parse(chunks.join('').split('\n')[0] ?? '') as { type: string; key: string },
    );
    expect(keys[0]?.type).toBe('hello');
    expect(keys[0]?.key).toMatch(/^[0-9a-f]{64}$/);
    expect(keys[0]?.key).not.toBe(keys[1]?.key);
  });

  it('fails the session, without crashing the host, on a line over the cap (the ending piece counted too)', async () => {
    const { kernel, reply, stdout } = fakeKernel();
    const connection = new KernelConnection(kernel, 1024);
    reply(ready);
    await connection.ready;
    const waiting = connection.request({ type: 'ping' });
    stdout.write('{"type":"ok","id":1,"pad":"' + 'x'.repeat(600));
    stdout.write('x'.repeat(600) + '"}\n');
    const error = await waiting.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SandboxFailureError);
    expect((error as Error).message).toContain('more than 1024 bytes');
  });

  it('matches responses to requests by random ids, even when a frame arrives in pieces', async () => {
    const { kernel, sent, stdout, frame, hello, reply } = fakeKernel();
    const connection = new KernelConnection(kernel);
    await hello;
    const line = frame(ready);
    stdout.write(line.slice(0, 10));
    stdout.write(line.slice(10));
    await expect(connection.ready).resolves.toMatchObject({ pid: 7 });
    const first = connection.request({ type: 'ping' });
    const second = connection.request({ type: 'ping' });
    await tick();
    const [firstId, secondId] = sent.map((message) => message['id']);
    expect(firstId).toMatch(/^[A-Za-z0-9_-]{16}$/);
    expect(secondId).toMatch(/^[A-Za-z0-9_-]{16}$/);
    expect(firstId).not.toBe(secondId);
    reply({ type: 'ok', id: secondId });
    reply({ type: 'ok', id: firstId });
    await expect(first).resolves.toEqual({ type: 'ok', id: firstId });
    await expect(second).resolves.toEqual({ type: 'ok', id: secondId });
  });

  it('ends the connection when the kernel breaks the protocol, with its log in the message', async () => {
    const { connection, waiting, id, reply, stdout, stderr } = await waitingPing();
    stderr.write('datalyst-supervisor: something odd\n');
    await tick();
    reply({ type: 'result', id, result: { status: 'pwned' } });
    const error = await waiting.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SandboxFailureError);
    expect((error as Error).message).toContain('breaks the protocol');
    expect((error as Error).message).toContain('something odd');
    await expect(connection.request({ type: 'ping' })).rejects.toBeInstanceOf(SandboxFailureError);
    stdout.end();
  });

  it('forged frame without the session key: ends the session, never taken as the answer', async () => {
    const { connection, waiting, id, forge, reply } = await waitingPing();
    forge(JSON.stringify({ type: 'ok', id }) + '\n');
    reply({ type: 'ok', id });
    const error = await waiting.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SandboxFailureError);
    expect((error as Error).message).toContain('the supervisor did not write');
    expect(connection.failed).toBeInstanceOf(SandboxFailureError);
  });

  it('forged frame with a guessed MAC, or a genuine frame replayed: ends the session', async () => {
    for (const attack of ['guessed', 'replayed'] as const) {
      const { waiting, id, forge, frame, stdout } = await waitingPing();
      const genuine = frame({ type: 'ok', id });
      if (attack === 'guessed') forge('0'.repeat(64) + ' ' + JSON.stringify({ type: 'ok', id }) + '\n');
      else {
        // A frame the supervisor wrote, sent again (or out of order) is refused too.
        stdout.write(frame({ type: 'error', id: null, message: 'first' }));
        forge(genuine.replace(/^[0-9a-f]{64}/, frame({ type: 'ok', id }).slice(0, 64)));
        stdout.write(genuine);
      }
      await expect(waiting).rejects.toBeInstanceOf(SandboxFailureError);
    }
  });

  it('refuses a kernel of another protocol version (an old image writes no MAC)', async () => {
    const { kernel, forge, hello } = fakeKernel();
    const connection = new KernelConnection(kernel);
    await hello;
    forge(JSON.stringify({ ...ready, protocol: 1 }) + '\n');
    await expect(connection.ready).rejects.toThrow(
      /protocol 1, this Datalyst speaks 2; the runner image is out of date/,
    );
  });

  it('refuses a kernel of another protocol version that does seal its frames', async () => {
    const { kernel, reply } = fakeKernel();
    const connection = new KernelConnection(kernel);
    reply({ ...ready, protocol: 99 });
    await expect(connection.ready).rejects.toThrow(/protocol 99/);
  });

  it("delivers a request's output frames, in order, before its answer; drops other ids' and a listener's throw", async () => {
    const { kernel, reply, sent } = fakeKernel();
    const connection = new KernelConnection(kernel);
    reply(ready);
    await connection.ready;
    const chunks: OutputChunk[] = [];
    const waiting = connection.request(
      { type: 'ping' },
      {
        onOutput: (chunk) => {
          chunks.push(chunk);
          if (chunk.text === 'b') throw new Error('a listener bug');
        },
      },
    );
    await tick();
    const id = sent.at(-1)?.['id'];
    reply({ type: 'output', id, stream: 'stdout', text: 'a' });
    reply({ type: 'output', id: 'someone-else', stream: 'stdout', text: 'x' });
    reply({ type: 'output', id, stream: 'stderr', text: 'b' });
    reply({ type: 'output', id, stream: 'stdout', text: 'c' });
    reply({ type: 'ok', id });
    await expect(waiting).resolves.toEqual({ type: 'ok', id });
    expect(chunks).toEqual([
      { stream: 'stdout', text: 'a' },
      { stream: 'stderr', text: 'b' },
      { stream: 'stdout', text: 'c' },
    ]);
  });

  it('fails waiting requests when the kernel output ends', async () => {
    const { waiting, stdout } = await waitingPing();
    stdout.end();
    await expect(waiting).rejects.toBeInstanceOf(SandboxFailureError);
  });

  it('gives up on an aborted request, tells the kernel, and drops the late answer', async () => {
    const { kernel, reply, sent } = fakeKernel();
    const connection = new KernelConnection(kernel);
    reply(ready);
    await connection.ready;
    const controller = new AbortController();
    const waiting = connection.request(
      { type: 'ping' },
      { signal: controller.signal, onAbort: (id) => connection.notify({ type: 'cancel', target: id }) },
    );
    await tick();
    const pingId = sent.at(-1)?.['id'];
    controller.abort();
    await expect(waiting).rejects.toBeInstanceOf(CancelledError);
    await tick();
    expect(sent.at(-1)).toMatchObject({ type: 'cancel', target: pingId });
    reply({ type: 'ok', id: pingId });
    reply({ type: 'ok', id: sent.at(-1)?.['id'] });
    const next = connection.request({ type: 'ping' });
    await tick();
    const nextId = sent.at(-1)?.['id'];
    reply({ type: 'ok', id: nextId });
    await expect(next).resolves.toEqual({ type: 'ok', id: nextId });
  });

  it('fails a request that gets no answer in time', async () => {
    const { kernel, reply } = fakeKernel();
    const connection = new KernelConnection(kernel);
    reply(ready);
    await connection.ready;
    await expect(connection.request({ type: 'ping' }, { answerWithinMs: 20 })).rejects.toThrow(
      /did not answer/,
    );
  });
});
