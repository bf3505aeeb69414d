import path from 'node:path';
import { ChartDiskCache, backgroundChartPool, chartCacheKey, sharedChartPool } from '../report/index.ts';
import type { RenderedChart } from '../report/index.ts';
import type { ThreadService } from './thread-service.ts';

/** Charts being drawn now, by run folder and spec: a chart asked for twice is drawn once. */
const drawing = new Map<string, Promise<RenderedChart>>();

/**
 * The key a report's pool looks the chart up under (its spec's content, the
 * default row cap and id scoping the report draws with), so that a report of
 * the thread (report-cache.ts) finds it and draws nothing again. A spec
 * JSON cannot hold (a cycle: the trace is JSON, so none) is drawn each time.
 */
const specKey = (spec: unknown): string | null => chartCacheKey(spec);

/**
 * A chart of a thread drawn to sanitized SVG (no PNG) by the report's chart
 * workers, kept in the thread's run folder (`.chart-cache/`, checked and
 * sanitized again when read back). The server draws each chart once its
 * cell has displayed it and a turn slot is free (`prefetchCharts`, in
 * spare-time.ts's spare time), so that the web UI's first view of
 * a thread — even after a restart, or once the idle workers have stopped —
 * reads the charts from disk instead of starting the workers and drawing them
 * all then. Those drawings are the background pool's (`priority`); a view that
 * asks for a chart still being drawn there waits for it (on a machine the
 * turns keep busy, ~10 times as long as at full priority) rather than draw
 * it twice.
 */
export function drawThreadChart(
  runDir: string,
  spec: unknown,
  priority: 'view' | 'background' = 'view',
): Promise<RenderedChart> {
  const pool = priority === 'view' ? sharedChartPool() : backgroundChartPool();
  const key = specKey(spec);
  if (key === null) return pool.render(spec, { png: false });
  const id = `${runDir}\n${key}`;
  const running = drawing.get(id);
  if (running !== undefined) return running;
  const disk = new ChartDiskCache(path.join(runDir, '.chart-cache'));
  const chart = disk.read(key, false).then(async (kept) => {
    if (kept !== null) return kept;
    const drawn = await pool.render(spec, { png: false });
    disk.write(key, drawn);
    await disk.flush();
    return drawn;
  });
  drawing.set(id, chart);
  void chart.finally(() => drawing.delete(id)).catch(() => undefined);
  return chart;
}

/**
 * Draws a cell's charts in the background pool, ahead of any view (never fails; given to the server's
 * spare time as the cell ends, so it neither slows the turn nor takes its CPU).
 */
export async function prefetchCharts(runDir: string, charts: readonly { spec: unknown }[]): Promise<void> {
  await Promise.allSettled(charts.map((chart) => drawThreadChart(runDir, chart.spec, 'background')));
}

type ChartSpecs = Map<string, unknown>;

/** Finished turns' chart specs by chart id, the most recently used last; at most this many turns. */
const MAX_TURNS_INDEXED = 16;
const finishedTurnSpecs = new Map<string, Promise<ChartSpecs>>();

async function readChartSpecs(
  threads: ThreadService,
  threadId: string,
  index: number,
  signal: AbortSignal,
  until: string | null,
): Promise<ChartSpecs> {
  const specs: ChartSpecs = new Map();
  // A running turn: only the events recorded so far (a chart is named by an execution-end the client has
  // already seen), never waited on, so an id that does not exist is a 404 at once, even while the turn runs.
  const events =
    threads.liveTurn(threadId, index) !== null
      ? threads.eventsSoFar(threadId, index)
      : threads.events(threadId, index, 0, signal);
  for await (const event of events) {
    if (event.type === 'turn-done') break;
    if (event.type !== 'execution-end') continue;
    const result = (event as { result?: { charts?: { id: string; spec: unknown }[] } }).result;
    for (const chart of result?.charts ?? []) specs.set(chart.id, chart.spec);
    if (until !== null && specs.has(until)) break;
  }
  return specs;
}

/**
 * The spec of a chart a cell displayed, from the turn's events. A running
 * turn's events so far are searched (never waited on); a finished
 * turn's log is read once for all its charts and kept (a page of twenty
 * charts otherwise reads the log twenty times). Null when there is no such chart.
 */
export async function findChartSpec(
  threads: ThreadService,
  threadId: string,
  index: number,
  chartId: string,
  signal: AbortSignal,
): Promise<unknown> {
  if (threads.liveTurn(threadId, index) !== null) {
    return (await readChartSpecs(threads, threadId, index, signal, chartId)).get(chartId) ?? null;
  }
  const key = `${threadId}/${index}`;
  let specs = finishedTurnSpecs.get(key);
  if (specs === undefined) {
    // Read for whoever asks next: one request going away does not stop it.
    specs = readChartSpecs(threads, threadId, index, new AbortController().signal, null);
    specs.catch(() => finishedTurnSpecs.delete(key));
  } else {
    finishedTurnSpecs.delete(key);
  }
  finishedTurnSpecs.set(key, specs);
  for (const oldest of finishedTurnSpecs.keys()) {
    if (finishedTurnSpecs.size <= MAX_TURNS_INDEXED) break;
    finishedTurnSpecs.delete(oldest);
  }
  const found = (await specs).get(chartId);
  // A thread deleted and a new one under the same id is not possible (ids are random), so a kept index stays right.
  return found === undefined ? null : found;
}
