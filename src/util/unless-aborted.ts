/**
 * Settles as `promise` does, unless the signal aborts first: then rejects with
 * `toError(signal.reason)`. The operation itself is not stopped: a container
 * create the engine may still complete, or a chart another caller waits for,
 * is seen to its end by whoever owns it.
 */
export function unlessAborted<T>(
  promise: Promise<T>,
  signal: AbortSignal | undefined,
  toError: (reason: unknown) => unknown = (reason) => reason,
): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(toError(signal.reason) as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(toError(signal.reason) as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error as Error);
      },
    );
  });
}
