import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderReport } from '../src/report/index.ts';
import { makeSyntheticTrace } from '../test/fixtures/traces/synthetic-trace.ts';

/**
 * Renders a synthetic run of 30 rounds with 20 vega-lite charts of 5 000
 * points and 10 PNG figures, and prints the time per format and the HTML
 * size as JSON. `prepare` (charts rendered once to SVG and PNG, grounding)
 * is shared by all formats. Target: everything within 2 s on a 2-core machine.
 */
const rounds = 30;
const charts = 20;
const chartPoints = 5_000;
const figures = 10;
const repeats = Number(process.env.BENCH_REPEATS ?? 3);

const trace = makeSyntheticTrace({ seed: 2025, rounds, charts, chartPoints, figures });
const outDir = await mkdtemp(join(tmpdir(), 'datalyst-bench-report-'));
try {
  // The first render pays for loading modules and JIT; it is printed, not counted in the median.
  const coldStarted = performance.now();
  await renderReport(trace, { outDir });
  const coldMs = Math.round(performance.now() - coldStarted);
  const runs = [];
  for (let run = 0; run < repeats; run++) {
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    const rendered = await renderReport(trace, { outDir });
    const cpu = process.cpuUsage(cpuBefore);
    // CPU time of all threads (resvg rasterizes on libuv's pool): what the render needs when the
    // machine is busy with other work and wall time says little.
    runs.push({ totalMs: performance.now() - started, cpuMs: (cpu.user + cpu.system) / 1000, ...rendered });
  }
  const median = <T>(values: T[], key: (value: T) => number): number => {
    const sorted = values.map(key).sort((a, b) => a - b);
    return Math.round(sorted[Math.floor(sorted.length / 2)] ?? 0);
  };
  const last = runs.at(-1);
  console.log(
    JSON.stringify(
      {
        trace: { rounds, charts, chartPoints, figures },
        repeats,
        coldFirstRenderMs: coldMs,
        loadAverage1m: Number(loadavg()[0]?.toFixed(2)),
        medianMs: {
          total: median(runs, (run) => run.totalMs),
          cpuAllThreads: median(runs, (run) => run.cpuMs),
          prepareShared: median(runs, (run) => run.timingsMs.prepare),
          html: median(runs, (run) => run.timingsMs.html),
          md: median(runs, (run) => run.timingsMs.md),
          ipynb: median(runs, (run) => run.timingsMs.ipynb),
          json: median(runs, (run) => run.timingsMs.json),
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
