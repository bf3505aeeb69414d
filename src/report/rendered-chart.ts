/**
 * What drawing a chart gives, and its limits. Apart from the drawing itself
 * (chart-renderer.ts, which loads vega and runs in the chart workers), so the
 * process that assembles a report never loads vega.
 */
export interface RenderedChart {
  /** Sanitized SVG markup, null when the spec failed. */
  svg: string | null;
  png: Uint8Array | null;
  widthPx: number;
  heightPx: number;
  /** Why the chart could not be drawn; null when it was. */
  error: string | null;
  /** What was changed to draw it (rows capped, remote data removed). */
  notes: string[];
  /** The vega-lite spec after capping, for the notebook; null for plain vega specs or failures. */
  vegaLiteSpec: Record<string, unknown> | null;
}

export const DEFAULT_MAX_CHART_ROWS = 5_000;
/** A chart larger than this (width × height in pixels) gets no PNG: resvg's pixel buffer lies outside the worker's heap limit. */
export const MAX_CHART_PNG_PIXELS = 16_000_000;
/** A chart whose SVG is larger is refused: it would make the report unusable (a 5 000-point chart is under 1 MB). */
export const MAX_CHART_SVG_BYTES = 8 * 1024 * 1024;

/** A chart that could not be drawn: the report shows `error` in its place. */
export function failedChart(error: string, notes: string[] = []): RenderedChart {
  return { svg: null, png: null, widthPx: 0, heightPx: 0, error, notes, vegaLiteSpec: null };
}
