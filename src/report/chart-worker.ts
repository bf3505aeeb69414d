import { rasterizeSvg, renderChart } from './chart-renderer.ts';
import { specFromSource } from './chart-source.ts';
import { failedChart } from './rendered-chart.ts';
import { chartJobSchema } from './chart-worker-protocol.ts';
import type { ChartWorkerMessage } from './chart-worker-protocol.ts';

/**
 * A chart worker process: draws untrusted specs for ChartPool, which enforces
 * the time and memory limits by killing this process. The pool sends the next
 * chart once this one is drawn, while its PNG is made on libuv's threads.
 * Started through chart-worker-bootstrap.mjs.
 */
const send = process.send?.bind(process);
if (!send) throw new Error('chart-worker.ts runs as a child process started by ChartPool (chart-pool.ts).');
const post = (message: ChartWorkerMessage): void => {
  send(message);
};

// Ctrl-C reaches the whole process group; the pool decides when this process ends.
process.on('SIGINT', () => undefined);
// The pool is gone (closed, or its process ended): nothing left to draw for.
process.on('disconnect', () => process.exit(0));

process.on('message', (raw: unknown) => {
  const job = chartJobSchema.safeParse(raw);
  if (!job.success) {
    // Answered rather than dropped, or the pool would wait for the time limit.
    const id = (raw as { id?: unknown } | null)?.id;
    if (typeof id === 'number' && Number.isInteger(id) && id >= 0)
      post({
        type: 'failed',
        id,
        message: `the chart job is malformed: ${job.error.issues[0]?.message ?? ''}`,
      });
    return;
  }
  const { id, maxRows, png, source, scopeIds, rasterize } = job.data;
  if (rasterize !== undefined) {
    // A chart kept without its PNG: the pool merges this into the kept chart.
    const notes: string[] = [];
    rasterizeSvg(rasterize, notes, { onDrawn: () => post({ type: 'drawn', id }) }).then(
      (pngBytes) =>
        post({
          type: 'chart',
          id,
          chart: {
            svg: null,
            png: pngBytes,
            widthPx: 0,
            heightPx: 0,
            error: null,
            notes,
            vegaLiteSpec: null,
          },
        }),
      (error: unknown) =>
        post({ type: 'failed', id, message: error instanceof Error ? error.message : String(error) }),
    );
    return;
  }
  // Files from `datalyst chart` are parsed here, under this worker's limits.
  const fromSource = source === undefined ? null : specFromSource(source);
  if (fromSource?.error) {
    post({ type: 'chart', id, chart: failedChart(fromSource.error) });
    return;
  }
  const spec = fromSource === null ? job.data.spec : fromSource.spec;
  renderChart(spec, { maxRows, png, scopeIds, onDrawn: () => post({ type: 'drawn', id }) }).then(
    (chart) => post({ type: 'chart', id, chart }),
    (error: unknown) =>
      post({ type: 'failed', id, message: error instanceof Error ? error.message : String(error) }),
  );
});

post({ type: 'ready' });
