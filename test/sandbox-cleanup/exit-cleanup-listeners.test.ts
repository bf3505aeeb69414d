import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { liveSandboxCount, trackForExitCleanup } from '../../src/sandbox/exit-cleanup.ts';
import type { KernelProcess } from '../../src/sandbox/kernel-process.ts';

/**
 * The signal listeners are there while a sandbox is: installed with the first, removed with the last.
 * One kept after the last sandbox closed made a process that also loads signal-exit (execa, many CLIs)
 * wait on two handlers that each left the exit to the other: two Ctrl-Cs did nothing.
 */
const fakeKernel = (): KernelProcess => ({
  stdin: new PassThrough(),
  stdout: new PassThrough(),
  stderr: new PassThrough(),
  description: 'fake',
  dispose: () => Promise.resolve(),
});
const ours = (signal: NodeJS.Signals): number =>
  process.listeners(signal).filter((listener) => Symbol.for('datalyst.exit-cleanup.listener') in listener)
    .length;

describe('exit cleanup listeners', () => {
  it('come with the first sandbox and go with the last, for each of SIGINT, SIGTERM and SIGHUP', async () => {
    expect(ours('SIGINT')).toBe(0);
    const first = trackForExitCleanup(fakeKernel());
    const second = trackForExitCleanup(fakeKernel());
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) expect(ours(signal)).toBe(1);
    await first.dispose();
    expect(ours('SIGINT')).toBe(1);
    await second.dispose();
    expect(liveSandboxCount()).toBe(0);
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) expect(ours(signal)).toBe(0);
    // The next sandbox installs them again.
    const third = trackForExitCleanup(fakeKernel());
    expect(ours('SIGINT')).toBe(1);
    await third.dispose();
    expect(ours('SIGINT')).toBe(0);
  });
});
