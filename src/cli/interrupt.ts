import { CancelledError } from '../errors/index.ts';

/**
 * Ctrl-C for a run: the first SIGINT (or SIGTERM) aborts the run's signal, so
 * the model request and the cell stop, the container is removed and the
 * partial trace and a report marked cancelled are written; a second one exits
 * at once with 130.
 */
export interface InterruptOptions {
  /** Told once, on the first signal (e.g. "cancelling… press Ctrl-C again to quit"). */
  onFirst: (signal: NodeJS.Signals) => void;
  /** The second signal: must end the process. */
  onSecond: (signal: NodeJS.Signals) => void;
  /** Where the signals come from; default `process`. */
  source?: Pick<NodeJS.Process, 'on' | 'off'>;
}

export interface InterruptHandle {
  readonly signal: AbortSignal;
  /** True once the first signal arrived. */
  readonly interrupted: boolean;
  /** Removes the handlers (Node's default Ctrl-C behaviour returns). */
  dispose(): void;
}

const handledSignals: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];

export function handleInterrupts(options: InterruptOptions): InterruptHandle {
  const source = options.source ?? process;
  const controller = new AbortController();
  let count = 0;
  const listener = (signal: NodeJS.Signals): void => {
    count += 1;
    if (count === 1) {
      // Told first: aborting runs the run's own listeners at once, and what they print ("The run was
      // cancelled.") came before "Cancelling: …".
      options.onFirst(signal);
      controller.abort(new CancelledError(signal));
    } else {
      options.onSecond(signal);
    }
  };
  for (const name of handledSignals) source.on(name, listener);
  return {
    signal: controller.signal,
    get interrupted() {
      return count > 0;
    },
    dispose() {
      for (const name of handledSignals) source.off(name, listener);
    },
  };
}
