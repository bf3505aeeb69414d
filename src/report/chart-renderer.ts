import { renderAsync } from '@resvg/resvg-js';
import type { ResvgRenderOptions } from '@resvg/resvg-js';
import * as vega from 'vega';
import { scopeSvgIds, sanitizeChartSvg } from './chart-svg.ts';
import { remoteDataUrls, summarizingTransformsOf, unknownFieldTypes } from './chart-spec-checks.ts';
import { systemFontFiles } from './system-fonts.ts';
import { expressionInterpreter } from './vega-expression-interpreter.js';
import * as vegaLite from 'vega-lite';
import { z } from 'zod';
import {
  DEFAULT_MAX_CHART_ROWS,
  MAX_CHART_PNG_PIXELS,
  MAX_CHART_SVG_BYTES,
  failedChart,
} from './rendered-chart.ts';
import type { RenderedChart } from './rendered-chart.ts';

/**
 * Renders a chart spec captured by the kernel (vega-lite, or plain vega) to
 * SVG and PNG, headless, in Node: no canvas (vega's SVG string renderer
 * estimates text width), no network (data URLs are stripped and the loader
 * refuses every load), no code generation (vega-interpreter evaluates the
 * spec's expressions). A spec that does not compile becomes an error, never
 * a throw: one bad chart must not take the report down.
 */

export interface ChartRenderOptions {
  /** Rows kept per inline dataset; the rest are dropped with a note. Default 5 000. */
  maxRows?: number;
  /** Also rasterize to PNG (for Markdown and notebooks). Default true. */
  png?: boolean;
  signal?: AbortSignal;
  /** Called when the SVG is done, before the PNG is made (off this thread). */
  onDrawn?: () => void;
  /**
   * Make the SVG's ids (gradients, clip paths) unique to this chart, so that
   * many charts can share one HTML page. Default true; false gives vega's own
   * ids, as `vl2svg` writes them.
   */
  scopeIds?: boolean;
}

// Just enough to tell vega from vega-lite; vega-lite's compiler checks the rest.
const specSchema = z.looseObject({ $schema: z.string().optional() });

/** Renders one spec. Never throws for a bad spec; throws only when aborted. */
export async function renderChart(spec: unknown, options: ChartRenderOptions = {}): Promise<RenderedChart> {
  const maxRows = options.maxRows ?? DEFAULT_MAX_CHART_ROWS;
  const parsed = specSchema.safeParse(spec);
  if (!parsed.success) return failedChart('The chart spec is not a JSON object.');
  const notes: string[] = [];
  let prepared: ReturnType<typeof prepareSpec>;
  try {
    const refusal = specRefusal(parsed.data);
    if (refusal !== null) return failedChart(refusal);
    prepared = prepareSpec(parsed.data, maxRows, notes);
  } catch (error) {
    // A spec nested thousands deep overflows the copy's recursion: an error for that chart, not a throw.
    return failedChart(`The chart spec could not be read: ${messageOf(error)}`);
  }
  const { spec: capped, largestCut } = prepared;
  const isPlainVega = isPlainVegaSpec(capped);
  let vegaSpec: vega.Spec;
  try {
    // The compilers check the spec's shape themselves and throw on what they cannot use.
    vegaSpec = isPlainVega
      ? (capped as vega.Spec)
      : vegaLite.compile(capped as unknown as vegaLite.TopLevelSpec, { logger: silentLogger() }).spec;
  } catch (error) {
    // vega-lite checks little before it compiles: a mark, channel or type it does not know often ends in
    // a TypeError from inside it ("Cannot read properties of undefined"), which names nothing of the spec.
    const hint =
      error instanceof TypeError
        ? ' (vega-lite failed inside: check the mark, the channels and the field types against the vega-lite schema)'
        : '';
    return failedChart(`The vega-lite spec does not compile: ${messageOf(error)}${hint}`, notes);
  }
  if (largestCut !== null) {
    // Fewer points is said in a note; a sum or a count of the first rows is a wrong figure, so no chart.
    const summaries = summarizingTransformsOf(vegaSpec);
    if (summaries.length > 0)
      return failedChart(
        `The chart summarizes its rows (${summaries.join(', ')}), and its data has ${count(largestCut)} rows, more than the ${count(maxRows)} a chart is drawn from: drawn from the first ${count(maxRows)}, its figures would be wrong. Aggregate or sample the data first, or with \`datalyst chart\` raise --max-rows.`,
      );
  }
  let svg: string;
  let view: vega.View | undefined;
  try {
    const runtime = vega.parse(vegaSpec, undefined, { ast: true });
    view = new vega.View(runtime, {
      renderer: 'none',
      loader: offlineLoader(),
      expr: expressionInterpreter,
      logLevel: vega.None,
    });
    // vega numbers gradients and clip paths with counters global to the process: restarted for
    // each chart, so that a chart is drawn the same whatever the worker drew before.
    vega.resetSVGDefIds();
    svg = sanitizeChartSvg(await view.toSVG());
    if (options.scopeIds !== false) svg = scopeSvgIds(svg);
  } catch (error) {
    return failedChart(`The chart could not be drawn: ${messageOf(error)}`, notes);
  } finally {
    view?.finalize();
  }
  options.signal?.throwIfAborted();
  if (svg.length > MAX_CHART_SVG_BYTES) {
    const megabytes = (svg.length / 1024 / 1024).toFixed(1);
    return failedChart(
      `The chart draws ${megabytes} MB of SVG, more than the ${MAX_CHART_SVG_BYTES / 1024 / 1024} MB a report holds: aggregate or sample the data first.`,
      notes,
    );
  }
  const size = svgSize(svg);
  const png =
    options.png === false
      ? null
      : await rasterizeSvg(svg, notes, {
          ...(options.signal ? { signal: options.signal } : {}),
          ...(options.onDrawn ? { onDrawn: options.onDrawn } : {}),
        });
  return { svg, png, ...size, error: null, notes, vegaLiteSpec: isPlainVega ? null : capped };
}

/**
 * The PNG of a chart's SVG (drawn by `renderChart`, sanitized and with its
 * ids as the report keeps them), or null with a note when it has none. Also
 * for a chart kept without its PNG: rasterizing the kept SVG gives the same
 * pixels as drawing the chart again with `png`, without running vega again.
 */
export async function rasterizeSvg(
  svg: string,
  notes: string[],
  options: Pick<ChartRenderOptions, 'signal' | 'onDrawn'> = {},
): Promise<Uint8Array | null> {
  const size = svgSize(svg);
  if (size.widthPx * size.heightPx > MAX_CHART_PNG_PIXELS) {
    notes.push(
      `No PNG: the chart is ${size.widthPx.toLocaleString('en-US')} × ${size.heightPx.toLocaleString('en-US')} px, more than the ${(MAX_CHART_PNG_PIXELS / 1e6).toLocaleString('en-US')} million pixels a report rasterizes.`,
    );
    return null;
  }
  options.onDrawn?.();
  try {
    // renderAsync rasterizes on libuv's thread pool, so the next chart's SVG can be built meanwhile.
    const image = await renderAsync(svg, rasterOptionsOnce(), options.signal ?? null);
    return new Uint8Array(image.asPng());
  } catch (error) {
    options.signal?.throwIfAborted();
    notes.push(`No PNG: ${messageOf(error)}`);
    return null;
  }
}

function isPlainVegaSpec(spec: { $schema?: string | undefined }): boolean {
  return /\/schema\/vega\/v\d/.test(spec.$schema ?? '');
}

/** Why a spec is not drawn before anything is done with it (it loads remote data, names an unknown field type), or null. */
function specRefusal(spec: Record<string, unknown> & { $schema?: string | undefined }): string | null {
  const urls = remoteDataUrls(spec);
  if (urls.length > 0)
    return `The chart loads its data from ${urls.map((url) => `"${url.slice(0, 80)}"`).join(', ')}, and a chart here is drawn only from the rows in its spec: nothing is fetched or read. Put the rows in the spec (data.values), or with \`datalyst chart\` pass the file with --data.`;
  const badTypes = isPlainVegaSpec(spec) ? [] : unknownFieldTypes(spec);
  if (badTypes.length > 0)
    return `The vega-lite spec does not compile: ${badTypes.join('; ')}, and a field's type is quantitative, temporal, ordinal, nominal or geojson.`;
  return null;
}

/** The spec with its rows capped (and notes on what was cut), and the row count of the largest dataset cut (null: none). */
function prepareSpec(
  spec: Record<string, unknown>,
  maxRows: number,
  notes: string[],
): { spec: Record<string, unknown> & { $schema?: string }; largestCut: number | null } {
  const { spec: capped, largestCut } = capSpecData(spec, maxRows, notes);
  if (!isPlainVegaSpec(capped)) notes.push(...missingFieldNotes(capped));
  if (!isPlainVegaSpec(capped) && largestDataset(capped) > ARIA_MAX_ROWS) {
    // One aria-label per point makes a 5 000-point SVG half again as large and
    // slower to build, and helps no screen reader; the chart keeps its title.
    capped.config = { ...(isRecord(capped.config) ? capped.config : {}), aria: false };
  }
  return { spec: capped, largestCut };
}

function count(value: number): string {
  return value.toLocaleString('en-US');
}

let rasterOptions: ResvgRenderOptions | null = null;

/** resvg's options, made on the first PNG: the system's fonts listed once rather than searched for every image (system-fonts.ts). */
function rasterOptionsOnce(): ResvgRenderOptions {
  const files = systemFontFiles();
  rasterOptions ??= {
    background: 'white',
    fitTo: { mode: 'zoom', value: 1 },
    font: {
      ...(files === null ? { loadSystemFonts: true } : { loadSystemFonts: false, fontFiles: [...files] }),
      defaultFontFamily: 'DejaVu Sans',
      sansSerifFamily: 'DejaVu Sans',
    },
    logLevel: 'off',
  };
  return rasterOptions;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function silentLogger(): ReturnType<typeof vega.logger> {
  return vega.logger(vega.None);
}

/** A loader that refuses everything: a report never fetches, reads files or follows links. */
function offlineLoader(): vega.Loader {
  const loader = vega.loader();
  const refuse = (uri: string): Promise<never> =>
    Promise.reject(new Error(`Loading ${uri} is not allowed in a report.`));
  loader.load = refuse;
  // vega's SVG renderer expects sanitize to resolve (a rejection surfaces as an
  // unhandled TypeError); a null href makes it drop the link or image source.
  loader.sanitize = () => Promise.resolve({ href: null as unknown as string });
  loader.http = refuse;
  loader.file = refuse;
  return loader;
}

/**
 * Caps every inline dataset (`data.values`, top-level `datasets`) at maxRows,
 * with a note for each one cut. The spec's objects are copied, but data rows
 * are shared with the original, not cloned: a 5 000-row clone per chart was
 * most of the renderer's garbage. Remote data (`data.url`) is refused before
 * this (`remoteDataUrls`), and the loader refuses every load besides.
 */
export function capSpecData(
  spec: Record<string, unknown>,
  maxRows: number,
  notes: string[],
): { spec: Record<string, unknown> & { $schema?: string }; largestCut: number | null } {
  let largestCut: number | null = null;
  const capRows = (rows: unknown[], name: string | null): unknown[] => {
    if (rows.length <= maxRows) return rows;
    largestCut = Math.max(largestCut ?? 0, rows.length);
    notes.push(
      `${name === null ? 'The data' : `Dataset "${name}"`} has ${count(rows.length)} rows; the chart shows the first ${count(maxRows)} (the row limit).`,
    );
    return rows.slice(0, maxRows);
  };
  const copy = (node: unknown, key: string | null): unknown => {
    if (Array.isArray(node)) return node.map((item) => copy(item, null));
    if (!isRecord(node)) return node;
    const result: Record<string, unknown> = {};
    for (const [childKey, child] of Object.entries(node)) {
      if (key === 'datasets' && Array.isArray(child)) result[childKey] = capRows(child, childKey);
      else if (key === 'data' && childKey === 'values' && Array.isArray(child))
        result[childKey] = capRows(child, null);
      else result[childKey] = copy(child, childKey);
    }
    return result;
  };
  return { spec: copy(spec, null) as Record<string, unknown> & { $schema?: string }, largestCut };
}

const ARIA_MAX_ROWS = 1_000;

const compositeKeys = ['layer', 'concat', 'hconcat', 'vconcat', 'facet', 'repeat', 'spec'] as const;

/**
 * Fields a single-view vega-lite spec encodes that its inline rows do not
 * hold: vega-lite draws such a chart without complaint, with empty axes
 * ("unit" for "units"). Only where the answer is certain: inline rows of
 * objects, no transform (which could make the field), plain field names.
 */
function missingFieldNotes(spec: Record<string, unknown>): string[] {
  const data = spec.data;
  const rows = isRecord(data) && Array.isArray(data.values) ? data.values : null;
  const first: unknown = rows?.[0];
  if (!isRecord(first) || spec.transform !== undefined || !isRecord(spec.encoding) || spec.mark === undefined)
    return [];
  // A layer, facet, repeat or concatenation can make or rename fields in its parts: only a single view is judged.
  if (compositeKeys.some((key) => spec[key] !== undefined)) return [];
  const known = new Set<string>();
  for (const row of rows ?? []) if (isRecord(row)) for (const key of Object.keys(row)) known.add(key);
  const missing = new Set<string>();
  for (const definition of Object.values(spec.encoding)) {
    for (const channel of Array.isArray(definition) ? definition : [definition]) {
      const field = isRecord(channel) ? channel.field : undefined;
      if (typeof field === 'string' && !/[.[\]\\]/.test(field) && !known.has(field)) missing.add(field);
    }
  }
  if (missing.size === 0) return [];
  const names = (values: Iterable<string>) => [...values].map((value) => `"${value}"`).join(', ');
  return [
    `The encoding uses ${names(missing)}, which the data does not have (its fields: ${names(known)}): the chart has nothing to draw there.`,
  ];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function largestDataset(spec: Record<string, unknown>): number {
  let largest = 0;
  const visit = (node: unknown, key: string | null): void => {
    if (Array.isArray(node)) {
      if (key === 'values' || key === 'datasets-entry') largest = Math.max(largest, node.length);
      else for (const item of node) visit(item, null);
      return;
    }
    if (!isRecord(node)) return;
    for (const [childKey, child] of Object.entries(node))
      visit(child, key === 'datasets' ? 'datasets-entry' : childKey);
  };
  visit(spec, null);
  return largest;
}

function svgSize(svg: string): { widthPx: number; heightPx: number } {
  const width = /<svg[^>]*\swidth="([\d.]+)"/.exec(svg)?.[1];
  const height = /<svg[^>]*\sheight="([\d.]+)"/.exec(svg)?.[1];
  return { widthPx: Math.round(Number(width ?? 0)), heightPx: Math.round(Number(height ?? 0)) };
}

// Re-exported for the tests that import them from here.
export { sanitizeChartSvg, scopeSvgIds };
