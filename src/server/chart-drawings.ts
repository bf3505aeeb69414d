import { createHash } from 'node:crypto';
import path from 'node:path';
import { ChartDiskCache, sharedChartPool } from '../report/index.ts';
import type { RenderedChart } from '../report/index.ts';

/** Runs whose charts are being drawn now, by run folder and spec: a chart asked for twice is drawn once. */
const drawing = new Map<string, Promise<RenderedChart>>();

const specKey = (spec: unknown): string =>
  `server-svg:${createHash('sha256').update(JSON.stringify(spec)).digest('hex')}`;

/**
 * A chart of a thread drawn to sanitized SVG (no PNG) by the report's chart
 * workers, kept in the thread's run folder (`.chart-cache/`, checked and
 * sanitized again when read back). The server draws each chart as soon as
 * its cell displays it (`prefetchCharts`), so that the web UI's first view of
 * a thread — even after a restart, or once the idle workers have stopped —
 * reads the charts from disk instead of starting the workers and drawing them
 * all then.
 */
export function drawThreadChart(runDir: string, spec: unknown): Promise<RenderedChart> {
  const key = specKey(spec);
  const id = `${runDir}\n${key}`;
  const running = drawing.get(id);
  if (running !== undefined) return running;
  const disk = new ChartDiskCache(path.join(runDir, '.chart-cache'));
  const chart = disk.read(key, false).then(async (kept) => {
    if (kept !== null) return kept;
    const drawn = await sharedChartPool().render(spec, { png: false });
    disk.write(key, drawn);
    await disk.flush();
    return drawn;
  });
  drawing.set(id, chart);
  void chart.finally(() => drawing.delete(id)).catch(() => undefined);
  return chart;
}

/** Draws a cell's charts in the background as it ends (never slows or fails the turn). */
export function prefetchCharts(runDir: string, charts: readonly { spec: unknown }[]): void {
  for (const chart of charts) void drawThreadChart(runDir, chart.spec).catch(() => undefined);
}
