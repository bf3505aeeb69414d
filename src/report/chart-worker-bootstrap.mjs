// Entry of a chart worker process (see chart-pool.ts). Plain JavaScript so
// Node loads it without the TypeScript loader: the libraries, most of the
// start-up time, are imported natively while tsx starts (through tsx's hooks
// each of their modules costs a round trip to its loader thread: zod alone
// added 0.1 s); then the TypeScript worker module named by the first argument runs.
const libraries = Promise.all([
  import('vega'),
  import('vega-lite'),
  import('./vega-expression-interpreter.js'),
  import('@resvg/resvg-js'),
  import('zod'),
]);
const { register } = await import('tsx/esm/api');
await libraries;
register();
await import(process.argv[2]);
