import { mkdtemp, rm } from 'node:fs/promises';
import { execa } from 'execa';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChartPool, renderReport, sharedChartPool } from '../src/report/index.ts';
import type { RenderedReport } from '../src/report/index.ts';
import { makeSyntheticTrace } from '../test/fixtures/traces/synthetic-trace.ts';

/**
 * Renders a synthetic run of 30 rounds with 20 vega-lite charts of 5 000
 * points and 10 PNG figures, and prints the time per format and the HTML
 * size as JSON. `prepare` (charts drawn to SVG and PNG in the chart workers,
 * grounding) is shared by all formats. Target: everything within 2 s on a
 * 2-core machine.
 *
 * Three situations: `cold` is the first render of this process (the chart
 * workers start, their code is not yet optimized: `datalyst report` on a run
 * folder); `warm` the median of the renders after it (a process that renders
 * reports one after another); `afterRun` a render whose charts were drawn
 * while the run went on (`datalyst analyze` ends with this).
 *
 * `BENCH_CHART_CACHE_DIR=dir`: the cold render keeps its charts in `dir`
 * (a run folder's `.chart-cache`) and takes them from it when a previous
 * process drew them: `datalyst report` on a run folder. `BENCH_COLD_ONLY=1`
 * stops after the cold render.
 *
 * `--ab <baseline checkout>`: alternates, each in a fresh process, the
 * baseline's bench (its cold figure), this one with an empty chart cache,
 * and this one with the cache the previous process left.
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
const timed = async (pool?: ChartPool): Promise<RenderedReport & { totalMs: number }> => {
  const started = performance.now();
  const rendered = await renderReport(trace, { outDir, ...(pool ? { chartPool: pool } : {}) });
  return { ...rendered, totalMs: performance.now() - started };
};
try {
  const cacheDir = process.env.BENCH_CHART_CACHE_DIR;
  const coldPool = cacheDir ? new ChartPool({ cache: true, cacheDir }) : undefined;
  const cold = await timed(coldPool);
  // Closing waits for the cache files to be written, after the clock stopped (as `datalyst report` does after printing).
  await coldPool?.close();
  if (process.env.BENCH_COLD_ONLY === '1') {
    console.log(
      JSON.stringify({
        coldMs: { total: Math.round(cold.totalMs), prepareShared: Math.round(cold.timingsMs.prepare) },
        reused: coldPool?.stats.reused ?? 0,
      }),
    );
    process.exit(0);
  }
  const runs = [];
  for (let run = 0; run < repeats; run++) runs.push(await timed());

  // As `datalyst analyze` does: a cached pool draws each chart when its cell ends; the report reuses them.
  const runPool = new ChartPool({ cache: true });
  for (const record of trace.records)
    if (record.type === 'execution')
      for (const chart of record.result.charts) if ('spec' in chart) await runPool.render(chart.spec);
  const afterRun = await timed(runPool);
  await runPool.close();

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
        coldMs: { total: Math.round(cold.totalMs), prepareShared: Math.round(cold.timingsMs.prepare) },
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
          total: Math.round(afterRun.totalMs),
          prepareShared: Math.round(afterRun.timingsMs.prepare),
        },
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
  const coldOf = async (cwd: string, env: Record<string, string>): Promise<number> => {
    const { stdout } = await execa('npx', ['tsx', 'bench/report.bench.ts'], {
      cwd,
      env: { ...env, BENCH_REPEATS: '1' },
    });
    const json = JSON.parse(stdout.slice(stdout.indexOf('{'))) as { coldMs: { total: number } };
    return json.coldMs.total;
  };
  const here = join(import.meta.dirname, '..');
  try {
    for (let round = 1; round <= rounds; round++) {
      const cacheDir = join(cacheRoot, `round-${round}`);
      const baseline = await coldOf(baselineRoot, {});
      const emptyCache = await coldOf(here, { BENCH_COLD_ONLY: '1', BENCH_CHART_CACHE_DIR: cacheDir });
      const fromCache = await coldOf(here, { BENCH_COLD_ONLY: '1', BENCH_CHART_CACHE_DIR: cacheDir });
      console.log(
        `round ${round}: baseline cold ${baseline} ms | new cold, nothing drawn before ${emptyCache} ms | new cold, charts drawn by an earlier process ${fromCache} ms (load ${loadavg()[0]?.toFixed(2)})`,
      );
    }
  } finally {
    await rm(cacheRoot, { recursive: true, force: true });
  }
}
