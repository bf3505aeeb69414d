import type { KernelProcess, KernelStartRequest, SandboxBackend } from './kernel-process.ts';

/**
 * Ctrl-C (SIGINT), SIGTERM and SIGHUP remove the process's sandboxes before it
 * exits. A container would also go away by itself once the engine notices its
 * owner's connection closed, but only if it was started and only if the
 * engine notices; removing it here is immediate and says so.
 *
 * The handler does not change how the process ends. It acts only when nobody
 * else listens to the signal (the default would be to die): it removes the
 * sandboxes, then raises the signal again, so the exit status is the usual
 * 128 + n. An application with its own handler (the CLI cancels a run on the
 * first Ctrl-C and still collects artifacts) keeps full control; its sessions
 * close in its own `finally`, or go with the process when it exits (the engine
 * removes a container whose owner's connection closed).
 *
 * "Nobody else listens" is decided when the signal arrives, so our listener
 * must run before any other: a `process.once` listener removes itself before
 * it is called, and a listener after it would count one too few and kill a
 * process whose application meant to cancel gracefully (the README's
 * streaming example did exactly that). Ours is prepended, and moved back to
 * the front after any later `prependListener`/`prependOnceListener` (a
 * signal is delivered from the event loop, never between a registration and
 * the microtask that follows it). A second signal after a `once` handler has
 * gone finds only ours, and removes the sandboxes and exits.
 */

const HANDLED_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
/** A wedged engine must not keep a Ctrl-C from ending the process. */
const CLEANUP_TIMEOUT_MS = 5_000;

const liveKernels = new Set<KernelProcess>();
let installed = false;
let cleaning: Promise<void> | undefined;
/** A signal's cleanup is under way: its listener stays until it is done (a second Ctrl-C waits for it, not the default exit). */
let signalled = false;

/**
 * Marks the listeners of this module. Another copy of it can share the process (two versions of
 * Datalyst installed side by side; a test runner's fresh module graph per file): the copies must
 * not count each other as the application's handler, nor take turns putting themselves first —
 * each moved itself in front of the other on every move, forever, and the process ran out of memory.
 */
const LISTENER_MARK = Symbol.for('datalyst.exit-cleanup.listener');

function isDatalystListener(listener: unknown): boolean {
  return typeof listener === 'function' && LISTENER_MARK in listener;
}

/**
 * signal-exit (loaded by execa while it runs a child, ink, ora, write-file-atomic, many CLIs) listens
 * to signals too, and like us acts only when it is alone: each would take the other for the
 * application's handler and neither would end the process. Its listeners are told by their source
 * (v4's names `__signal_exit_emitter__`, v3's is `function listener` reading `emitter.count`), and
 * never more of them than signal-exit says it loaded (its count, kept where every copy can see: v4 on
 * `globalThis[Symbol.for('signal-exit emitter')]`, v3 on `process.__signal_exit_emitter__`). The count
 * alone goes stale (an application that removed every listener and added its own would have its
 * handler taken for signal-exit's); the source alone could match an application's code.
 */
function isSignalExitListener(listener: unknown): boolean {
  try {
    const source = Function.prototype.toString.call(listener);
    return (
      source.includes('__signal_exit_emitter__') ||
      (/^function listener\s*\(/.test(source) && source.includes('emitter.count'))
    );
  } catch {
    return false; // not a plain function (a proxy): not signal-exit's
  }
}

function signalExitLoadedCount(): number {
  let count = 0;
  try {
    const v4 = (globalThis as unknown as Record<symbol, unknown>)[Symbol.for('signal-exit emitter')];
    const v3 = (process as unknown as Record<string, unknown>)['__signal_exit_emitter__'];
    for (const emitter of [v4, v3]) {
      const loaded = (emitter as { count?: unknown } | undefined)?.count;
      if (typeof loaded === 'number' && Number.isInteger(loaded) && loaded > 0) count += loaded;
    }
  } catch {
    return 0; // a forged global that throws must not break the signal handler
  }
  return count;
}

/** Listeners of the application's own: neither ours (any copy) nor signal-exit's. */
function applicationListenerCount(signal: NodeJS.Signals): number {
  const others = process.listeners(signal).filter((listener) => !isDatalystListener(listener));
  const signalExit = Math.min(others.filter(isSignalExitListener).length, signalExitLoadedCount());
  return others.length - signalExit;
}

function onSignal(signal: NodeJS.Signals): void {
  // The application's own handler, if any, decides; every copy of this module cleans up its own kernels.
  if (applicationListenerCount(signal) > 0) return;
  void cleanUpThenRaise(signal);
}
Object.defineProperty(onSignal, LISTENER_MARK, { value: true });

function isHandledSignal(event: string | symbol): event is NodeJS.Signals {
  return (HANDLED_SIGNALS as readonly (string | symbol)[]).includes(event);
}

/** Puts our listener back in front of one that an application prepended after it. */
function onNewListener(event: string | symbol): void {
  if (!isHandledSignal(event)) return;
  queueMicrotask(() => {
    // First already: ours, or another copy's (which decides as ours would).
    if (!installed || isDatalystListener(process.listeners(event)[0])) return;
    process.off(event, onSignal);
    process.prependListener(event, onSignal);
  });
}

async function cleanUpThenRaise(signal: NodeJS.Signals): Promise<void> {
  signalled = true;
  cleaning ??= disposeLiveKernels(signal);
  await cleaning;
  cleaning = undefined;
  signalled = false;
  uninstall();
  if (applicationListenerCount(signal) > 0) return;
  // Raised again with signal-exit still listening, it finds itself alone: it runs its callbacks and ends the process.
  // That signal arrives on a later turn of the event loop, and the sandboxes just removed may have been all that kept
  // the loop alive: without this timer the process would end first, by a normal exit with status 0.
  if (process.listenerCount(signal) > 0) setTimeout(() => undefined, 5_000);
  process.kill(process.pid, signal);
}

async function disposeLiveKernels(signal: NodeJS.Signals): Promise<void> {
  const kernels = [...liveKernels];
  liveKernels.clear();
  if (kernels.length === 0) return;
  process.stderr.write(`datalyst: ${signal}: removing ${kernels.length} sandbox(es) before exiting\n`);
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.allSettled(kernels.map((kernel) => kernel.dispose())),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, CLEANUP_TIMEOUT_MS);
    }),
  ]);
  clearTimeout(timer);
}

function install(): void {
  if (installed) return;
  installed = true;
  for (const signal of HANDLED_SIGNALS) process.prependListener(signal, onSignal);
  process.on('newListener', onNewListener);
}

function uninstall(): void {
  if (!installed) return;
  installed = false;
  for (const signal of HANDLED_SIGNALS) process.off(signal, onSignal);
  process.off('newListener', onNewListener);
}

/** How many kernels a signal would remove now (for tests and diagnostics). */
export function liveSandboxCount(): number {
  return liveKernels.size;
}

/** Registers a started kernel until it is disposed; installs the signal handlers on first use. */
export function trackForExitCleanup(kernel: KernelProcess): KernelProcess {
  install();
  const tracked: KernelProcess = {
    stdin: kernel.stdin,
    stdout: kernel.stdout,
    stderr: kernel.stderr,
    description: kernel.description,
    ...(kernel.inputs ? { inputs: kernel.inputs } : {}),
    ...(kernel.image === undefined ? {} : { image: kernel.image }),
    ...(kernel.runtime === undefined ? {} : { runtime: kernel.runtime }),
    dispose: () => {
      liveKernels.delete(tracked);
      // No sandbox left: no listener either. One kept after the last sandbox closed made a process that also
      // loads signal-exit (execa, many CLIs) wait on two handlers that each left the exit to the other.
      if (liveKernels.size === 0 && !signalled) uninstall();
      return kernel.dispose();
    },
  };
  liveKernels.add(tracked);
  return tracked;
}

/** A backend whose kernels are removed when the process gets SIGINT, SIGTERM or SIGHUP. */
export function withExitCleanup(backend: SandboxBackend): SandboxBackend {
  return {
    name: backend.name,
    async start(request: KernelStartRequest): Promise<KernelProcess> {
      return trackForExitCleanup(await backend.start(request));
    },
  };
}
