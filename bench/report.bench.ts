import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { execa } from 'execa';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChartPool, renderReport, sharedChartPool } from '../src/report/index.ts';
import type { RenderedReport, ReportFormat } from '../src/report/index.ts';
import { makeSyntheticTrace } from '../test/fixtures/traces/synthetic-trace.ts';

/**
 * Renders a synthetic run of 30 rounds with 20 vega-lite charts of 5 000
 * points and 10 PNG figures, and prints the time per format and the HTML
 * size as JSON. `prepare` (charts drawn to SVG and PNG in the chart workers,
 * grounding) is shared by all formats. Target: everything within 2 s on a
 * 2-core machine.
 *
 * Three situations:
 * - `cold`: nothing drawn before. The first render of a fresh process, no
 *   `.chart-cache`, no chart worker started: every chart is drawn (the
 *   workers start, their code is not yet optimized). `datalyst report` on a
 *   run folder nobody drew, or a library user's first `renderReport`.
 * - `warm`: the median of the renders after it (a process that renders
 *   reports one after another; its pool has no cache, so charts are drawn again).
 * - `afterRun`: the report `datalyst analyze`, `chat` and `analyze --continue`
 *   write at the end. Their pool starts its workers when the run starts and
 *   draws each chart as its cell ends, while the model thinks. That drawing
 *   is not free and is printed apart (`drawnDuringRun`: wall time from a
 *   cold pool, all charts sent at once as if the cells had no model turn
 *   between them, and the workers' CPU seconds); the report is then timed.
 *
 * `BENCH_AFTER_RUN_ONLY=1` measures only `afterRun`, in a fresh process.
 *
 * `BENCH_FORMATS=html,json` (with `BENCH_COLD_ONLY=1`): the cold render of
 * those formats only. HTML (and PDF, printed from it) embeds the charts as
 * SVG and needs no PNG; Markdown and the notebook need PNGs. It prints the
 * chart workers' CPU seconds too (their start included).
 *
 * `BENCH_CHART_CACHE_DIR=dir`: the cold render keeps its charts in `dir`
 * (a run folder's `.chart-cache`) and takes them from it when a previous
 * process drew them: `datalyst report` on a run folder. `BENCH_COLD_ONLY=1`
 * stops after the cold render.
 *
 * `--ab <baseline checkout>`: alternates, each in a fresh process, the
 * baseline's bench (its cold figure), this one with an empty chart cache,
 * this one with the cache the previous process left, and this one after a
 * run (charts drawn during the run, then the report).
 */
if (process.argv[2] === '--ab') {
  await compareCold(process.argv[3] ?? '/work/main', Number(process.env.BENCH_ROUNDS ?? 3));
  process.exit(0);
}
const rounds = 30;
const charts = 20;
const chartPoints = 5_000;
const figures = 10;
const repeats = Number(process.env.BENCH_REPEATS ?? 5);

const trace = makeSyntheticTrace({ seed: 2025, rounds, charts, chartPoints, figures });
const outDir = await mkdtemp(join(tmpdir(), 'datalyst-bench-report-'));

/** CPU seconds (user + system) a process has used so far. */
async function processCpuSeconds(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * As `datalyst analyze` does: a cached pool, started with the run, draws each chart when its cell
 * ends; the report then reuses them. Returns the drawing's cost and the report's time.
 */
async function afterRunReport(): Promise<{
  drawnDuringRun: { wallMs: number; workerCpuSeconds: number };
  report: RenderedReport & { totalMs: number };
}> {
  const runPool = new ChartPool({ cache: true });
  const drawStarted = performance.now();
  runPool.warm();
  const drawing: Array<Promise<unknown>> = [];
  for (const record of trace.records)
    if (record.type === 'execution')
      for (const chart of record.result.charts) if ('spec' in chart) drawing.push(runPool.render(chart.spec));
  await Promise.all(drawing);
  const drawMs = performance.now() - drawStarted;
  let workerCpuSeconds = 0;
  for (const pid of runPool.workerPids()) workerCpuSeconds += await processCpuSeconds(pid);
  const report = await timed(runPool);
  await runPool.close();
  return {
    drawnDuringRun: { wallMs: Math.round(drawMs), workerCpuSeconds: Number(workerCpuSeconds.toFixed(2)) },
    report,
  };
}
const coldFormats = process.env.BENCH_FORMATS?.split(',') as ReportFormat[] | undefined;
const timed = async (
  pool?: ChartPool,
  formats?: readonly ReportFormat[],
): Promise<RenderedReport & { totalMs: number }> => {
  const started = performance.now();
  const rendered = await renderReport(trace, {
    outDir,
    ...(pool ? { chartPool: pool } : {}),
    ...(formats ? { formats } : {}),
  });
  return { ...rendered, totalMs: performance.now() - started };
};
/** Ends a measurement that prints only part of the figures (`process.exit` would skip the `finally` that removes `outDir`). */
const finishEarly = async (): Promise<never> => {
  await rm(outDir, { recursive: true, force: true });
  process.exit(0);
};
try {
  if (process.env.BENCH_AFTER_RUN_ONLY === '1') {
    const { drawnDuringRun, report } = await afterRunReport();
    console.log(
      JSON.stringify({
        afterRunMs: {
          total: Math.round(report.totalMs),
          prepareShared: Math.round(report.timingsMs.prepare),
        },
        drawnDuringRun,
      }),
    );
    await finishEarly();
  }
  const cacheDir = process.env.BENCH_CHART_CACHE_DIR;
  const coldPool = cacheDir ? new ChartPool({ cache: true, cacheDir }) : undefined;
  const cold = await timed(coldPool, process.env.BENCH_COLD_ONLY === '1' ? coldFormats : undefined);
  let coldWorkerCpuSeconds = 0;
  for (const pid of (coldPool ?? sharedChartPool()).workerPids())
    coldWorkerCpuSeconds += await processCpuSeconds(pid);
  // Closing waits for the cache files to be written, after the clock stopped (as `datalyst report` does after printing).
  await coldPool?.close();
  if (process.env.BENCH_COLD_ONLY === '1') {
    console.log(
      JSON.stringify({
        formats: coldFormats ?? 'html,md,ipynb,json',
        coldMs: { total: Math.round(cold.totalMs), prepareShared: Math.round(cold.timingsMs.prepare) },
        coldWorkerCpuSeconds: Number(coldWorkerCpuSeconds.toFixed(2)),
        reused: coldPool?.stats.reused ?? 0,
      }),
    );
    await finishEarly();
  }
  const runs = [];
  for (let run = 0; run < repeats; run++) runs.push(await timed());

  const { drawnDuringRun, report: afterRun } = await afterRunReport();

  const median = <T>(values: T[], key: (value: T) => number): number => {
    const sorted = values.map(key).sort((a, b) => a - b);
    return Math.round(sorted[Math.floor(sorted.length / 2)] ?? 0);
  };
  const last = runs.at(-1);
  console.log(
    JSON.stringify(
      {
        trace: { rounds, charts, chartPoints, figures },
        machine: { cores: availableParallelism(), loadAverage1m: Number(loadavg()[0]?.toFixed(2)) },
        chartWorkers: sharedChartPool().size,
        repeats,
        coldMs: {
          definition: 'fresh process, no .chart-cache, no chart worker started: every chart drawn',
          total: Math.round(cold.totalMs),
          prepareShared: Math.round(cold.timingsMs.prepare),
          chartWorkersCpuSeconds: Number(coldWorkerCpuSeconds.toFixed(2)),
        },
        warmMedianMs: {
          total: median(runs, (run) => run.totalMs),
          prepareShared: median(runs, (run) => run.timingsMs.prepare),
          html: median(runs, (run) => run.timingsMs.html),
          md: median(runs, (run) => run.timingsMs.md),
          ipynb: median(runs, (run) => run.timingsMs.ipynb),
          json: median(runs, (run) => run.timingsMs.json),
        },
        warmMs: runs.map((run) => Math.round(run.totalMs)),
        afterRunMs: {
          definition:
            'the report analyze/chat write at the end: charts drawn during the run (cost in drawnDuringRun), then assembled',
          total: Math.round(afterRun.totalMs),
          prepareShared: Math.round(afterRun.timingsMs.prepare),
          html: Math.round(afterRun.timingsMs.html),
          md: Math.round(afterRun.timingsMs.md),
          ipynb: Math.round(afterRun.timingsMs.ipynb),
          json: Math.round(afterRun.timingsMs.json),
        },
        drawnDuringRun,
        htmlBytes: last?.htmlBytes,
        htmlMiB: Number(((last?.htmlBytes ?? 0) / 1024 / 1024).toFixed(2)),
        chartsRendered: last?.charts,
        targetMs: 2000,
      },
      null,
      2,
    ),
  );
} finally {
  await rm(outDir, { recursive: true, force: true });
}

/** Cold renders in fresh processes, alternating: baseline, new with an empty chart cache, new with the cache left by the one before. */
async function compareCold(baselineRoot: string, rounds: number): Promise<void> {
  const cacheRoot = await mkdtemp(join(tmpdir(), 'datalyst-bench-cache-'));
  const benchOf = async (cwd: string, env: Record<string, string>): Promise<Record<string, unknown>> => {
    const { stdout } = await execa('npx', ['tsx', 'bench/report.bench.ts'], {
      cwd,
      env: { ...env, BENCH_REPEATS: '1' },
    });
    return JSON.parse(stdout.slice(stdout.indexOf('{'))) as Record<string, unknown>;
  };
  const coldOf = async (cwd: string, env: Record<string, string>): Promise<number> =>
    ((await benchOf(cwd, env)) as { coldMs: { total: number } }).coldMs.total;
  const here = join(import.meta.dirname, '..');
  try {
    for (let round = 1; round <= rounds; round++) {
      const cacheDir = join(cacheRoot, `round-${round}`);
      const baseline = await coldOf(baselineRoot, {});
      const emptyCache = await coldOf(here, { BENCH_COLD_ONLY: '1', BENCH_CHART_CACHE_DIR: cacheDir });
      const fromCache = await coldOf(here, { BENCH_COLD_ONLY: '1', BENCH_CHART_CACHE_DIR: cacheDir });
      const afterRun = (await benchOf(here, { BENCH_AFTER_RUN_ONLY: '1' })) as {
        afterRunMs: { total: number };
        drawnDuringRun: { wallMs: number; workerCpuSeconds: number };
      };
      console.log(
        `round ${round}: baseline cold ${baseline} ms | new cold, nothing drawn before ${emptyCache} ms | new cold, charts drawn by an earlier process ${fromCache} ms | new after a run: report ${afterRun.afterRunMs.total} ms, charts drawn during the run ${afterRun.drawnDuringRun.wallMs} ms (${afterRun.drawnDuringRun.workerCpuSeconds} s worker CPU) (load ${loadavg()[0]?.toFixed(2)})`,
      );
    }
  } finally {
    await rm(cacheRoot, { recursive: true, force: true });
  }
}
