import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { CancelledError } from '../../src/errors/index.ts';
import { ChartPool, workerEnvironment } from '../../src/report/chart-pool.ts';
import { renderChart } from '../../src/report/chart-renderer.ts';
import { MAX_CHART_PNG_PIXELS, MAX_CHART_SVG_BYTES } from '../../src/report/rendered-chart.ts';
import { pointSpec, sequenceSpec } from '../support/chart-specs.ts';

const pngMagic = [0x89, 0x50, 0x4e, 0x47];

/** Runs an ES module in a new Node process with the project's TypeScript loader, from the project's root. */
function runScript(script: string, options: { reject?: boolean } = {}) {
  return execa('node', ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: new URL('../..', import.meta.url).pathname,
    timeout: 60_000,
    reject: options.reject ?? true,
  });
}

describe('ChartPool', () => {
  const pool = new ChartPool({ size: 2, memoryMb: 192, chartTimeoutMs: 20_000 });
  afterAll(() => pool.close());

  it('draws in a worker exactly what renderChart draws in this thread', async () => {
    const spec = pointSpec(300);
    const [inWorker, inThread] = await Promise.all([pool.render(spec), renderChart(spec)]);
    expect(inWorker.error).toBeNull();
    expect(inWorker.svg).toBe(inThread.svg);
    expect(Array.from(inWorker.png?.slice(0, 4) ?? [])).toEqual(pngMagic);
    // JSON: in this thread vega tags the rows it ingests with a symbol; the worker's rows are copies.
    expect(JSON.stringify(inWorker.vegaLiteSpec)).toBe(JSON.stringify(inThread.vegaLiteSpec));
  });

  it('keeps the order of many charts drawn at once', async () => {
    const titles = Array.from({ length: 6 }, (_, index) => `Chart number ${index}`);
    const charts = await Promise.all(
      titles.map((title) => pool.render(pointSpec(50, title), { png: false })),
    );
    charts.forEach((chart, index) => expect(chart.svg).toContain(`>${titles[index]}</text>`));
  });

  it('stops a chart that exhausts its heap and goes on with the next one', async () => {
    const [hostile, next] = await Promise.all([
      pool.render(sequenceSpec(100_000_000)),
      pool.render(pointSpec(20)),
    ]);
    expect(hostile.svg).toBeNull();
    expect(hostile.error).toContain('more than 192 MB of memory');
    expect(next.error).toBeNull();
    // The worker that died was replaced.
    expect((await pool.render(pointSpec(10), { png: false })).error).toBeNull();
  });

  it('stops a chart that takes longer than its time limit', async () => {
    const impatient = new ChartPool({ size: 1, chartTimeoutMs: 300 });
    try {
      const slow = await impatient.render(sequenceSpec(60_000));
      expect(slow.error).toBe('The chart took longer than 0.3 s to draw and was stopped.');
      expect((await impatient.render(pointSpec(10), { png: false })).error).toBeNull();
    } finally {
      await impatient.close();
    }
  });

  it('rejects a chart whose SVG would swamp the report', async () => {
    const chart = await pool.render(sequenceSpec(60_000), { png: false });
    expect(chart.svg).toBeNull();
    expect(chart.error).toContain(`more than the ${MAX_CHART_SVG_BYTES / 1024 / 1024} MB a report holds`);
  });

  it('rejects on abort, queued or running, with the CancelledError the rest of the library throws, and stays usable', async () => {
    const controller = new AbortController();
    const pending = [1, 2, 3].map(() => pool.render(sequenceSpec(40_000), { signal: controller.signal }));
    const reason = new Error('stop the charts');
    controller.abort(reason);
    for (const chart of pending)
      await expect(chart).rejects.toMatchObject({ code: 'CANCELLED', cause: reason });
    // Aborted before it is asked (no reason given: a DOMException): CancelledError too.
    await expect(pool.render(pointSpec(10), { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(
      CancelledError,
    );
    // A CancelledError given as the reason is kept as it is.
    const own = new CancelledError('SIGINT');
    await expect(pool.render(pointSpec(10), { signal: AbortSignal.abort(own) })).rejects.toBe(own);
    expect((await pool.render(pointSpec(10), { png: false })).error).toBeNull();
  });

  it('with a cache, draws a spec once however often and by whomever it is asked for', async () => {
    const cached = new ChartPool({ size: 1, cache: true });
    try {
      const first = cached.render(pointSpec(40), { png: false });
      // The same content in another object, as a report reads it back from the trace.
      const again = cached.render(JSON.parse(JSON.stringify(pointSpec(40))) as unknown, { png: false });
      expect(await again).toBe(await first);
      expect(cached.stats).toEqual({ drawn: 1, reused: 1, rasterized: 0 });
      // Without its PNG it does not serve a report that needs one as it is: its SVG is rasterized, not drawn again.
      const withPng = await cached.render(pointSpec(40));
      expect(Array.from(withPng.png?.slice(0, 4) ?? [])).toEqual(pngMagic);
      expect(cached.stats).toEqual({ drawn: 1, reused: 2, rasterized: 1 });
      await cached.render(pointSpec(40), { png: false });
      expect(cached.stats).toEqual({ drawn: 1, reused: 3, rasterized: 1 });
    } finally {
      await cached.close();
    }
  });

  it('draws no PNG of a chart too large to rasterize, and says so', async () => {
    const huge = { ...pointSpec(10), width: 6000, height: 4000 };
    const chart = await pool.render(huge);
    expect(chart.error).toBeNull();
    expect(chart.widthPx * chart.heightPx).toBeGreaterThan(MAX_CHART_PNG_PIXELS);
    expect(chart.png).toBeNull();
    expect(chart.notes.join(' ')).toContain('million pixels a report rasterizes');
  });

  it('gives each chart of a page its own gradient ids, and draws a chart alike whatever its worker drew before', async () => {
    // Regression: vega numbers gradients per process, so two heatmaps in one report both used
    // gradient_0 and the second legend painted with the first one's colours; and a worker's
    // second heatmap came out as gradient_1, unlike the same chart drawn first.
    const heatmap = (title: string, scheme: string): Record<string, unknown> => ({
      title,
      data: { values: Array.from({ length: 12 }, (_, index) => ({ a: index % 3, b: index % 4, v: index })) },
      mark: 'rect',
      encoding: {
        x: { field: 'a', type: 'ordinal' },
        y: { field: 'b', type: 'ordinal' },
        color: { field: 'v', type: 'quantitative', scale: { scheme } },
      },
    });
    const single = new ChartPool({ size: 1 });
    try {
      const first = await single.render(heatmap('Blues', 'blues'), { png: false });
      const second = await single.render(heatmap('Reds', 'reds'), { png: false });
      const ids = (svg: string | null) =>
        [...(svg ?? '').matchAll(/\sid="([^"]*gradient_\d+)"/g)].map((m) => m[1]);
      const refs = (svg: string | null) =>
        [...(svg ?? '').matchAll(/url\(#([^)]*gradient_\d+)\)/g)].map((m) => m[1]);
      expect(ids(first.svg)).toHaveLength(1);
      expect(ids(second.svg)).toHaveLength(1);
      expect(ids(first.svg)[0]).not.toBe(ids(second.svg)[0]);
      expect(refs(first.svg)).toEqual(ids(first.svg));
      expect(refs(second.svg)).toEqual(ids(second.svg));
      // Unscoped (`datalyst chart`): vega's own id, the same as in a fresh process.
      const unscoped = await single.render(heatmap('Reds', 'reds'), { png: false, scopeIds: false });
      expect(ids(unscoped.svg)).toEqual(['gradient_0']);
      expect((await renderChart(heatmap('Reds', 'reds'), { png: false })).svg).toBe(second.svg);
    } finally {
      await single.close();
    }
  });

  it('with a cache folder, a later pool (as in another process) takes the drawn charts from it and starts no worker', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'datalyst-chart-cache-'));
    try {
      const first = new ChartPool({ size: 1, cache: true, cacheDir: dir });
      const drawn = await first.render(pointSpec(100, 'Kept'));
      await first.close();
      const later = new ChartPool({ size: 1, cache: true, cacheDir: dir });
      const kept = await later.render(pointSpec(100, 'Kept'));
      expect(kept.svg).toBe(drawn.svg);
      expect(Array.from(kept.png ?? [])).toEqual(Array.from(drawn.png ?? []));
      expect(later.stats).toEqual({ drawn: 0, reused: 1, rasterized: 0 });
      expect(later.workerPids()).toEqual([]);

      // What is read back is the user's file: checked, sanitized again, and drawn afresh when unreadable.
      const files = (await readdir(dir)).filter((name) => name.endsWith('.json'));
      expect(files).toHaveLength(1);
      const entryPath = join(dir, files[0] as string);
      const entry = JSON.parse(await readFile(entryPath, 'utf8')) as { svg: string };
      await writeFile(
        entryPath,
        JSON.stringify({ ...entry, svg: entry.svg.replace('<g', '<script>alert(1)</script><g') }),
      );
      expect((await later.render(pointSpec(100, 'Kept'), { png: false })).svg).not.toContain('<script');
      await writeFile(entryPath, '{"svg": 3');
      const other = new ChartPool({ size: 1, cache: true, cacheDir: dir });
      expect((await other.render(pointSpec(100, 'Kept'))).svg).toBe(drawn.svg);
      expect(other.stats).toEqual({ drawn: 1, reused: 0, rasterized: 0 });
      await Promise.all([later.close(), other.close()]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a chart kept without its PNG gets the PNG rasterized from its SVG (the same bytes as drawing it with one), never drawn again', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'datalyst-chart-cache-png-'));
    try {
      const withPng = await pool.render(pointSpec(200, 'Raster'));
      // As the server draws for the web UI: SVG only, kept in the run folder.
      const first = new ChartPool({ size: 1, cache: true, cacheDir: dir });
      const svgOnly = await first.render(pointSpec(200, 'Raster'), { png: false });
      expect(svgOnly.png).toBeNull();
      // The same pool asked for the PNG later (the report of a chat with Markdown).
      const inMemory = await first.render(pointSpec(200, 'Raster'));
      expect(first.stats).toEqual({ drawn: 1, reused: 1, rasterized: 1 });
      expect(inMemory.svg).toBe(withPng.svg);
      expect(Buffer.from(inMemory.png ?? []).equals(Buffer.from(withPng.png ?? []))).toBe(true);
      await first.close();

      // Another process with only the SVG on disk.
      const svgDir = await mkdtemp(join(tmpdir(), 'datalyst-chart-cache-svg-'));
      try {
        const server = new ChartPool({ size: 1, cache: true, cacheDir: svgDir });
        await server.render(pointSpec(200, 'Raster'), { png: false });
        await server.close();
        const report = new ChartPool({ size: 1, cache: true, cacheDir: svgDir });
        const fromDisk = await report.render(pointSpec(200, 'Raster'));
        expect(report.stats).toEqual({ drawn: 0, reused: 1, rasterized: 1 });
        expect(Buffer.from(fromDisk.png ?? []).equals(Buffer.from(withPng.png ?? []))).toBe(true);
        await report.close();
        // The PNG was kept with it: the next process rasterizes nothing.
        const next = new ChartPool({ size: 1, cache: true, cacheDir: svgDir });
        expect((await next.render(pointSpec(200, 'Raster'))).png).not.toBeNull();
        expect(next.stats).toEqual({ drawn: 0, reused: 1, rasterized: 0 });
        expect(next.workerPids()).toEqual([]);
        await next.close();
      } finally {
        await rm(svgDir, { recursive: true, force: true });
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("gives workers none of this process's secrets", () => {
    const environment = workerEnvironment({
      PATH: '/usr/bin',
      HOME: '/home/me',
      OPENAI_API_KEY: 'sk-secret',
      DATALYST_API_KEY: 'x',
    });
    expect(environment).toEqual({ PATH: '/usr/bin', HOME: '/home/me' });
  });

  it('with a niceness, runs every thread of its workers at it (those that rasterize included), and the default pool does not', async () => {
    // Linux keeps a niceness per thread: field 19 of /proc/<pid>/task/<tid>/stat.
    const nicenessOfThreads = async (pid: number): Promise<number[]> => {
      const threads = await readdir(`/proc/${pid}/task`);
      return Promise.all(
        threads.map(async (thread) => {
          const stat = await readFile(`/proc/${pid}/task/${thread}/stat`, 'utf8');
          return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
        }),
      );
    };
    const background = new ChartPool({ size: 1, niceness: 10 });
    try {
      // With a PNG: the rasterizing threads have started by the time it is drawn.
      const chart = await background.render(pointSpec(200));
      expect(chart.error).toBeNull();
      const [pid] = background.workerPids();
      const niceness = await nicenessOfThreads(pid ?? 0);
      expect(niceness.length).toBeGreaterThan(1);
      expect(new Set(niceness)).toEqual(new Set([10]));
    } finally {
      await background.close();
    }
    await pool.render(pointSpec(10));
    const defaults = await Promise.all(pool.workerPids().map(nicenessOfThreads));
    expect(new Set(defaults.flat())).toEqual(new Set([0]));
  });

  it('rejects what is still waiting when closed', async () => {
    const closing = new ChartPool({ size: 1 });
    const waiting = expect(closing.render(pointSpec(10))).rejects.toThrow('closed');
    await closing.close();
    await waiting;
    await expect(closing.render(pointSpec(10))).rejects.toThrow('closed');
  });

  it('leaves no worker behind when the process ends without closing the pool', async () => {
    const script = [
      "import { ChartPool } from './src/report/chart-pool.ts';",
      'const pool = new ChartPool({ size: 2 });',
      'pool.warm();',
      "await pool.render({ mark: 'point', data: { values: [{ a: 1 }] }, encoding: { x: { field: 'a', type: 'quantitative' } } });",
      // A worker deep in a slow chart does not see its parent go (it reads no messages meanwhile).
      "void pool.render({ data: { sequence: { start: 0, stop: 400000, as: 'x' } }, mark: 'point', encoding: { x: { field: 'x', type: 'quantitative' } } });",
      'await new Promise((resolve) => setTimeout(resolve, 500));',
      'console.log(JSON.stringify(pool.workerPids()));',
      'process.exit(0);',
    ].join('\n');
    const child = await runScript(script);
    const pids = JSON.parse(child.stdout.trim()) as number[];
    expect(pids.length).toBe(2);
    const alive = (pid: number): boolean => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    // Generous: the workers notice their parent is gone within a second on a quiet machine, several under load.
    await expect.poll(() => pids.filter(alive), { timeout: 20_000 }).toEqual([]);
  });

  it('does not keep the process alive once the charts are drawn', async () => {
    const script = [
      "import { sharedChartPool } from './src/report/chart-pool.ts';",
      "const chart = await sharedChartPool().render({ mark: 'point', data: { values: [{ a: 1 }] }, encoding: { x: { field: 'a', type: 'quantitative' } } });",
      'console.log(chart.error === null ? "drawn" : chart.error);',
      // Closing an idle pool must finish (its workers are unreferenced), and the process then ends.
      'await sharedChartPool().close();',
      'console.log("closed");',
    ].join('\n');
    const child = await runScript(script, { reject: false });
    expect(child.timedOut).toBe(false);
    expect(child.stdout.trim().split('\n')).toEqual(['drawn', 'closed']);
    expect(child.exitCode).toBe(0);
  });
});
