import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { DatalystError } from '../../src/index.ts';
import { handleInterrupts } from '../../src/cli/interrupt.ts';

describe('Ctrl-C', () => {
  it('aborts the run on the first signal and calls for an exit on the second', () => {
    const source = new EventEmitter();
    const calls: string[] = [];
    const handle = handleInterrupts({
      source: source as unknown as Pick<NodeJS.Process, 'on' | 'off'>,
      onFirst: (signal) => calls.push(`first ${signal}`),
      onSecond: (signal) => calls.push(`second ${signal}`),
    });
    expect(handle.signal.aborted).toBe(false);
    source.emit('SIGINT', 'SIGINT');
    expect(handle.signal.aborted).toBe(true);
    expect(handle.interrupted).toBe(true);
    const reason: unknown = handle.signal.reason;
    expect(DatalystError.isInstance(reason) && reason.code).toBe('CANCELLED');
    source.emit('SIGTERM', 'SIGTERM');
    expect(calls).toEqual(['first SIGINT', 'second SIGTERM']);
    handle.dispose();
    expect(source.listenerCount('SIGINT')).toBe(0);
    expect(source.listenerCount('SIGTERM')).toBe(0);
  });

  it('says it is cancelling before the run is aborted, so what the run says comes after', () => {
    const source = new EventEmitter();
    const said: string[] = [];
    const handle = handleInterrupts({
      source: source as unknown as Pick<NodeJS.Process, 'on' | 'off'>,
      onFirst: () => said.push('Cancelling: stopping every sub-analysis…'),
      onSecond: () => undefined,
    });
    // What a deep run does when its signal is aborted: it says so at once.
    handle.signal.addEventListener('abort', () => said.push('The run was cancelled.'));
    source.emit('SIGINT', 'SIGINT');
    expect(said).toEqual(['Cancelling: stopping every sub-analysis…', 'The run was cancelled.']);
    handle.dispose();
  });
});
