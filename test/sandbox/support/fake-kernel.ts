import { PassThrough } from 'node:stream';
import { sealFrame } from '../../../src/sandbox/kernel-frames.ts';
import type { KernelProcess } from '../../../src/sandbox/kernel-process.ts';

/** The supervisor's first line, as the real one writes it. */
export const readyMessage = {
  type: 'ready',
  protocol: 2,
  pid: 7,
  workdir: '/w',
  subreaper: true,
  oomCounter: true,
};

/**
 * A kernel whose side of the protocol the test plays by hand: `sent` holds
 * every request the host wrote (the hello with the session key excepted),
 * `reply` writes a frame back sealed with that key as the supervisor does,
 * `onRequest` answers automatically. `frame` seals a message without writing
 * it (once the hello came), and `forge` writes a line as anything else in the
 * container could: without the key.
 */
export function fakeKernel(onRequest?: (request: Record<string, unknown>) => unknown) {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const sent: Record<string, unknown>[] = [];
  let key: Buffer | undefined;
  let sequence = 0;
  const waiting: unknown[] = [];
  const frame = (message: unknown): string => {
    if (!key) throw new Error('the host has not sent its hello yet');
    return sealFrame(key, sequence++, JSON.stringify(message));
  };
  const reply = (message: unknown) => {
    if (key) stdout.write(frame(message));
    else waiting.push(message);
  };
  const forge = (line: string) => stdout.write(line);
  let buffered = '';
  stdin.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    let newline = buffered.indexOf('\n');
    while (newline !== -1) {
      const request = JSON.parse(buffered.slice(0, newline)) as Record<string, unknown>;
      buffered = buffered.slice(newline + 1);
      newline = buffered.indexOf('\n');
      if (request['type'] === 'hello' && key === undefined) {
        key = Buffer.from(String(request['key']), 'hex');
        for (const message of waiting.splice(0)) reply(message);
        continue;
      }
      sent.push(request);
      const answer = onRequest?.(request);
      if (answer !== undefined) reply(answer);
    }
  });
  const hello = new Promise<void>((resolve) => {
    const check = () => (key ? resolve() : setImmediate(check));
    check();
  });
  const kernel: KernelProcess = { stdin, stdout, stderr, description: 'fake', dispose: async () => {} };
  return { kernel, sent, reply, frame, forge, hello, stdout, stderr };
}
