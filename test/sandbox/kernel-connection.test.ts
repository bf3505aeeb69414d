import { describe, expect, it } from 'vitest';
import { CancelledError, SandboxFailureError } from '../../src/errors/index.ts';
import { KernelConnection } from '../../src/sandbox/kernel-connection.ts';
import { fakeKernel, readyMessage } from './support/fake-kernel.ts';

const ready = readyMessage;

describe('KernelConnection', () => {
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

  it('matches responses to requests by id, even when a line arrives in pieces', async () => {
    const { kernel, sent, stdout } = fakeKernel();
    const connection = new KernelConnection(kernel);
    const line = JSON.stringify(ready) + '\n';
    stdout.write(line.slice(0, 10));
    stdout.write(line.slice(10));
    await expect(connection.ready).resolves.toMatchObject({ pid: 7 });
    const first = connection.request({ type: 'ping' });
    const second = connection.request({ type: 'ping' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent.map((message) => message['id'])).toEqual([1, 2]);
    stdout.write('{"type":"ok","id":2}\n{"type":"ok","id":1}\n');
    await expect(first).resolves.toEqual({ type: 'ok', id: 1 });
    await expect(second).resolves.toEqual({ type: 'ok', id: 2 });
  });

  it('ends the connection when the kernel breaks the protocol, with its log in the message', async () => {
    const { kernel, reply, stdout, stderr } = fakeKernel();
    const connection = new KernelConnection(kernel);
    reply(ready);
    await connection.ready;
    const waiting = connection.request({ type: 'ping' });
    stderr.write('datalyst-supervisor: something odd\n');
    await new Promise((resolve) => setImmediate(resolve));
    reply({ type: 'result', id: 1, result: { status: 'pwned' } });
    const error = await waiting.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SandboxFailureError);
    expect((error as Error).message).toContain('breaks the protocol');
    expect((error as Error).message).toContain('something odd');
    await expect(connection.request({ type: 'ping' })).rejects.toBeInstanceOf(SandboxFailureError);
    stdout.end();
  });

  it('refuses a kernel of another protocol version', async () => {
    const { kernel, reply } = fakeKernel();
    const connection = new KernelConnection(kernel);
    reply({ ...ready, protocol: 99 });
    await expect(connection.ready).rejects.toThrow(/protocol 99/);
  });

  it('fails waiting requests when the kernel output ends', async () => {
    const { kernel, reply, stdout } = fakeKernel();
    const connection = new KernelConnection(kernel);
    reply(ready);
    await connection.ready;
    const waiting = connection.request({ type: 'ping' });
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
    controller.abort();
    await expect(waiting).rejects.toBeInstanceOf(CancelledError);
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent.at(-1)).toMatchObject({ type: 'cancel', target: 1 });
    reply({ type: 'ok', id: 1 });
    reply({ type: 'ok', id: 2 });
    const next = connection.request({ type: 'ping' });
    await new Promise((resolve) => setImmediate(resolve));
    reply({ type: 'ok', id: 3 });
    await expect(next).resolves.toEqual({ type: 'ok', id: 3 });
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
