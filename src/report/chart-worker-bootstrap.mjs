// Entry of a chart worker process (see chart-pool.ts). Plain JavaScript so
// Node loads it without the TypeScript loader: the libraries, most of the
// start-up time, are imported natively while tsx starts (through tsx's hooks
// each of their modules costs a round trip to its loader thread: zod alone
// added 0.1 s); then the worker module named by the first argument runs. The
// TypeScript loader is only for a clone: the published package's worker is
// compiled JavaScript and tsx is not among its dependencies.
const workerUrl = process.argv[2];
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
