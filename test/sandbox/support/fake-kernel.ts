import { PassThrough } from 'node:stream';
import type { KernelProcess } from '../../../src/sandbox/kernel-process.ts';

/** The supervisor's first line, as the real one writes it. */
export const readyMessage = {
  type: 'ready',
  protocol: 1,
  pid: 7,
  workdir: '/w',
  subreaper: true,
  oomCounter: true,
};

/**
 * A kernel whose side of the protocol the test plays by hand: `sent` holds
 * every request the host wrote, `reply` writes a line back, `onRequest`
 * answers automatically.
 */
export function fakeKernel(onRequest?: (request: Record<string, unknown>) => unknown) {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const sent: Record<string, unknown>[] = [];
  const reply = (message: unknown) => stdout.write(JSON.stringify(message) + '\n');
  let buffered = '';
  stdin.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    let newline = buffered.indexOf('\n');
    while (newline !== -1) {
      const request = JSON.parse(buffered.slice(0, newline)) as Record<string, unknown>;
      sent.push(request);
      const answer = onRequest?.(request);
      if (answer !== undefined) reply(answer);
      buffered = buffered.slice(newline + 1);
      newline = buffered.indexOf('\n');
    }
  });
  const kernel: KernelProcess = { stdin, stdout, stderr, description: 'fake', dispose: async () => {} };
  return { kernel, sent, reply, stdout, stderr };
}
