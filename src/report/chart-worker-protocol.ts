import { z } from 'zod';
import { MAX_CHART_SVG_BYTES } from './rendered-chart.ts';

// A PNG of the largest chart allowed (MAX_CHART_PNG_PIXELS) is far below this.
const MAX_PNG_BYTES = 64 * 1024 * 1024;

/**
 * Messages between ChartPool (main thread) and chart-worker.ts. The worker
 * draws untrusted specs, so what it sends back is checked like any other
 * boundary.
 */

/** Largest spec file the chart command reads; read as bytes in the main process, parsed in the worker. */
export const MAX_SPEC_FILE_BYTES = 16 * 1024 * 1024;
/** Largest data file the chart command reads (it is parsed in the worker, under its heap limit). */
export const MAX_DATA_FILE_BYTES = 64 * 1024 * 1024;

/** Files the chart command hands over unparsed: the worker parses them, under its limits. */
export const chartSourceSchema = z.object({
  /** The spec file's text (vega-lite or vega JSON). */
  specText: z.string().max(MAX_SPEC_FILE_BYTES),
  /** A data file that replaces the spec's top-level data; its type is told by its extension. */
  data: z
    .object({
      fileName: z.string().max(4096),
      text: z.string().max(MAX_DATA_FILE_BYTES),
    })
    .optional(),
});
export type ChartSource = z.infer<typeof chartSourceSchema>;

export const chartJobSchema = z.object({
  id: z.number().int().nonnegative(),
  spec: z.unknown(),
  /** When set, the spec comes from these files instead of `spec`. */
  source: chartSourceSchema.optional(),
  maxRows: z.number().int().positive(),
  png: z.boolean(),
  /** Make the SVG's ids unique to the chart (reports); false keeps vega's own (`datalyst chart`). */
  scopeIds: z.boolean(),
  /** When set, only rasterize this SVG (a chart kept without its PNG); nothing is drawn. */
  rasterize: z.string().max(MAX_CHART_SVG_BYTES).optional(),
});
export type ChartJob = z.infer<typeof chartJobSchema>;

export const renderedChartSchema = z.object({
  svg: z.string().max(MAX_CHART_SVG_BYTES).nullable(),
  png: z
    .custom<Uint8Array>((value) => value instanceof Uint8Array && value.byteLength <= MAX_PNG_BYTES)
    .nullable(),
  widthPx: z.number().nonnegative(),
  heightPx: z.number().nonnegative(),
  error: z.string().max(10_000).nullable(),
  notes: z.array(z.string().max(10_000)).max(100),
  vegaLiteSpec: z.record(z.string(), z.unknown()).nullable(),
});

export const chartWorkerMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  // The SVG is done and the PNG is being made off the worker's JavaScript thread: it can take the next chart.
  z.object({ type: z.literal('drawn'), id: z.number().int().nonnegative() }),
  z.object({ type: z.literal('chart'), id: z.number().int().nonnegative(), chart: renderedChartSchema }),
  z.object({
    type: z.literal('failed'),
    id: z.number().int().nonnegative(),
    message: z.string().max(10_000),
  }),
]);
export type ChartWorkerMessage = z.infer<typeof chartWorkerMessageSchema>;
