import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { drawThreadChart, findChartSpec } from '../chart-drawings.ts';
import { notFound, ServerRequestError } from '../http-error.ts';
import { parseWith, type RouteContext } from '../route-context.ts';

const chartParams = z.object({
  threadId: z.string().max(64),
  index: z.coerce.number().int().positive().max(1e6),
  chartId: z
    .string()
    .max(100)
    .regex(/^[A-Za-z0-9_-]+$/),
});

/** Charts already drawn, by thread/turn/chart id (a chart's spec never changes once displayed), at most this many bytes. */
const MAX_CACHED_SVG_BYTES = 64 * 1024 * 1024;

/** The policy of a drawn chart: an image with its own inline styles, nothing else, in an opaque origin. */
const chartContentSecurityPolicy = "default-src 'none'; style-src 'unsafe-inline'; sandbox";

/**
 * `GET /v1/threads/{id}/turns/{n}/charts/{chartId}`: a vega-lite chart a
 * cell displayed, drawn to sanitized SVG by the report's chart workers (the
 * same drawing and sanitizing as the report), so that the web UI shows charts
 * as they appear without running vega in the page.
 */
export function registerChartRoutes(app: FastifyInstance, context: RouteContext): void {
  const drawnCharts = new Map<string, string>();
  let cachedBytes = 0;
  const remember = (key: string, svg: string): void => {
    drawnCharts.set(key, svg);
    cachedBytes += svg.length;
    for (const [oldKey, oldSvg] of drawnCharts) {
      if (cachedBytes <= MAX_CACHED_SVG_BYTES) break;
      drawnCharts.delete(oldKey);
      cachedBytes -= oldSvg.length;
    }
  };
  const send = (reply: FastifyReply, svg: string) =>
    reply
      .header('content-type', 'image/svg+xml; charset=utf-8')
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', chartContentSecurityPolicy)
      .header('cache-control', 'private, max-age=3600')
      .send(svg);

  app.get('/v1/threads/:threadId/turns/:index/charts/:chartId', async (request, reply) => {
    const { threadId, index, chartId } = parseWith(chartParams, request.params, 'path');
    const key = `${threadId}/${index}/${chartId}`;
    // A deleted thread's charts are gone, even those this route still remembers.
    if ((await context.threads.store.readThread(threadId)) === null) {
      const forgotten = drawnCharts.get(key);
      if (forgotten !== undefined) {
        drawnCharts.delete(key);
        cachedBytes -= forgotten.length;
      }
      throw notFound('chart', key);
    }
    const known = drawnCharts.get(key);
    if (known !== undefined) return send(reply, known);
    const gone = new AbortController();
    request.raw.once('close', () => gone.abort());
    // A finished turn's event log is read once for all its charts (chart-drawings.ts), not once per chart.
    const spec = await findChartSpec(context.threads, threadId, index, chartId, gone.signal);
    gone.abort();
    if (spec === null) throw notFound('chart', `${threadId}/${index}/${chartId}`);
    // SVG only: the page shows it as an image, so no PNG is rasterized.
    // Usually drawn already, when the cell displayed it (chart-drawings.ts): then it is read from the run folder.
    const drawn = await drawThreadChart(context.threads.store.runDir(threadId), spec);
    if (drawn.svg === null) {
      throw new ServerRequestError(
        422,
        'CHART_NOT_DRAWN',
        `The chart could not be drawn: ${drawn.error ?? ''}`,
        {
          fix: "See the turn's report for the chart's spec.",
        },
      );
    }
    remember(key, drawn.svg);
    return send(reply, drawn.svg);
  });
}
