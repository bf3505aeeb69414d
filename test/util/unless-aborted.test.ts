import { describe, expect, it } from 'vitest';
import { unlessAborted } from '../../src/util/unless-aborted.ts';

describe('unlessAborted', () => {
  it('settles as the promise does when nothing aborts', async () => {
    await expect(unlessAborted(Promise.resolve(7), new AbortController().signal)).resolves.toBe(7);
    await expect(unlessAborted(Promise.reject(new Error('no')), undefined)).rejects.toThrow('no');
  });

  it('rejects with the mapped reason when the signal aborts first, and leaves the work alone', async () => {
    const controller = new AbortController();
    let finish: (value: string) => void = () => undefined;
    const work = new Promise<string>((resolve) => (finish = resolve));
    const waiting = unlessAborted(
      work,
      controller.signal,
      (reason) => new Error(`stopped: ${String(reason)}`),
    );
    controller.abort('Ctrl-C');
    await expect(waiting).rejects.toThrow('stopped: Ctrl-C');
    finish('done anyway');
    await expect(work).resolves.toBe('done anyway');
  });

  it('rejects at once when the signal has already aborted', async () => {
    await expect(unlessAborted(new Promise(() => undefined), AbortSignal.abort('late'))).rejects.toBe('late');
  });
});
