// Entry of a chart worker process (see chart-pool.ts). Plain JavaScript so
// Node loads it without the TypeScript loader: the libraries, most of the
// start-up time, are imported natively while tsx starts (through tsx's hooks
// each of their modules costs a round trip to its loader thread: zod alone
// added 0.1 s); then the worker module named by the first argument runs. The
// TypeScript loader is only for a clone: the published package's worker is
// compiled JavaScript and tsx is not among its dependencies.
import { readdirSync } from 'node:fs';
import { setPriority } from 'node:os';

const workerUrl = process.argv[2];
const niceness = Number(process.argv[3] ?? 0);
if (niceness > 0) lowerPriority(niceness);
const libraries = Promise.all([
  import('vega'),
  import('vega-lite'),
  import('./vega-expression-interpreter.js'),
  import('@resvg/resvg-js'),
  import('zod'),
]);
if (workerUrl.endsWith('.ts')) {
  const { register } = await import('tsx/esm/api');
  await libraries;
  register();
} else {
  await libraries;
}
await import(workerUrl);

/**
 * Lowers this process's scheduling priority (a pool's `niceness`). Linux
 * keeps a niceness per thread: each thread running now (V8's) is set, and
 * threads started later (libuv's pool, which rasterizes) inherit the main
 * thread's. Best effort: a system that refuses leaves the worker as it is.
 */
function lowerPriority(value) {
  let threads = [0];
  try {
    threads = readdirSync('/proc/self/task').map(Number);
  } catch {
    // No /proc (macOS): setpriority of this process.
  }
  for (const thread of threads) {
    try {
      setPriority(thread, value);
    } catch {
      // A thread that just ended, or a system that does not allow it.
    }
  }
}
