import { renderAsync } from '@resvg/resvg-js';
import * as vega from 'vega';
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
}

// Just enough to tell vega from vega-lite; vega-lite's compiler checks the rest.
const specSchema = z.looseObject({ $schema: z.string().optional() });

/** Renders one spec. Never throws for a bad spec; throws only when aborted. */
export async function renderChart(spec: unknown, options: ChartRenderOptions = {}): Promise<RenderedChart> {
  const maxRows = options.maxRows ?? DEFAULT_MAX_CHART_ROWS;
  const parsed = specSchema.safeParse(spec);
  if (!parsed.success) return failedChart('The chart spec is not a JSON object.');
  const notes: string[] = [];
  const capped = prepareSpec(parsed.data, maxRows, notes);
  const isPlainVega = isPlainVegaSpec(capped);
  let vegaSpec: vega.Spec;
  try {
    // The compilers check the spec's shape themselves and throw on what they cannot use.
    vegaSpec = isPlainVega
      ? (capped as vega.Spec)
      : vegaLite.compile(capped as unknown as vegaLite.TopLevelSpec, { logger: silentLogger() }).spec;
  } catch (error) {
    return failedChart(`The vega-lite spec does not compile: ${messageOf(error)}`, notes);
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
    svg = sanitizeChartSvg(await view.toSVG());
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
  let png: Uint8Array | null = null;
  const pixels = size.widthPx * size.heightPx;
  if (options.png !== false && pixels > MAX_CHART_PNG_PIXELS) {
    notes.push(
      `No PNG: the chart is ${size.widthPx.toLocaleString('en-US')} × ${size.heightPx.toLocaleString('en-US')} px, more than the ${(MAX_CHART_PNG_PIXELS / 1e6).toLocaleString('en-US')} million pixels a report rasterizes.`,
    );
  } else if (options.png !== false) {
    options.onDrawn?.();
    try {
      // renderAsync rasterizes on libuv's thread pool, so the next chart's SVG can be built meanwhile.
      const image = await renderAsync(svg, rasterOptions, options.signal ?? null);
      png = new Uint8Array(image.asPng());
    } catch (error) {
      options.signal?.throwIfAborted();
      notes.push(`No PNG: ${messageOf(error)}`);
    }
  }
  return { svg, png, ...size, error: null, notes, vegaLiteSpec: isPlainVega ? null : capped };
}

function isPlainVegaSpec(spec: { $schema?: string }): boolean {
  return /\/schema\/vega\/v\d/.test(spec.$schema ?? '');
}

function prepareSpec(
  spec: Record<string, unknown>,
  maxRows: number,
  notes: string[],
): Record<string, unknown> & { $schema?: string } {
  const capped = capSpecData(spec, maxRows, notes);
  if (!isPlainVegaSpec(capped) && largestDataset(capped) > ARIA_MAX_ROWS) {
    // One aria-label per point makes a 5 000-point SVG half again as large and
    // slower to build, and helps no screen reader; the chart keeps its title.
    capped.config = { ...(isRecord(capped.config) ? capped.config : {}), aria: false };
  }
  return capped;
}

const rasterOptions = {
  background: 'white',
  fitTo: { mode: 'zoom', value: 1 },
  font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans', sansSerifFamily: 'DejaVu Sans' },
  logLevel: 'off',
} as const;

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
 * Caps every inline dataset (`data.values`, top-level `datasets`) at maxRows
 * and removes remote data (`data.url`). The spec's objects are copied, but
 * data rows are shared with the original, not cloned: a 5 000-row clone per
 * chart was most of the renderer's garbage.
 */
export function capSpecData(
  spec: Record<string, unknown>,
  maxRows: number,
  notes: string[],
): Record<string, unknown> & { $schema?: string } {
  const capRows = (rows: unknown[], describe: (total: string, kept: string) => string): unknown[] => {
    if (rows.length <= maxRows) return rows;
    notes.push(describe(rows.length.toLocaleString('en-US'), maxRows.toLocaleString('en-US')));
    return rows.slice(0, maxRows);
  };
  const copy = (node: unknown, key: string | null): unknown => {
    if (Array.isArray(node)) return node.map((item) => copy(item, null));
    if (!isRecord(node)) return node;
    const result: Record<string, unknown> = {};
    for (const [childKey, child] of Object.entries(node)) {
      if (key === 'datasets' && Array.isArray(child)) {
        result[childKey] = capRows(
          child,
          (total, kept) => `Dataset "${childKey}" has ${total} rows; the chart shows the first ${kept}.`,
        );
      } else if (key === 'data' && childKey === 'values' && Array.isArray(child)) {
        result[childKey] = capRows(
          child,
          (total, kept) => `The inline data has ${total} rows; the chart shows the first ${kept}.`,
        );
      } else if (key === 'data' && childKey === 'url') {
        notes.push(`Remote data (${String(child).slice(0, 80)}) was not loaded: a report never fetches.`);
        result.values = [];
      } else {
        result[childKey] = copy(child, childKey);
      }
    }
    return result;
  };
  return copy(spec, null) as Record<string, unknown> & { $schema?: string };
}

const ARIA_MAX_ROWS = 1_000;

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

/**
 * Defence in depth for markup made from untrusted specs: vega escapes text,
 * but hrefs (the `href` channel) and url() paint references could point
 * outside the report. Only in-document references and data: images survive.
 *
 * Structure, not text: only tags (their attributes and url() values) and
 * script and style elements are rewritten. The text of titles and labels is
 * the user's and round-trips exactly, even when it reads `url(...)` or
 * `href="..."` (vega escapes `<` and `&` in it, so it cannot open a tag).
 * One pass over the markup: charts of 5 000 points make SVGs of a megabyte.
 */
export function sanitizeChartSvg(svg: string): string {
  return svg.replace(
    SVG_MARKUP,
    (markup: string, closed: string | undefined, unclosed: string | undefined) => {
      if (unclosed !== undefined) return '';
      if (closed !== undefined) {
        // A script goes whole; a style element keeps its rules without outside url()s.
        return closed.toLowerCase() === 'script' ? '' : markup.replace(URL_REFERENCE, keepLocalUrl);
      }
      return markup.replace(ATTRIBUTE, keepSafeAttribute);
    },
  );
}

/**
 * A script or style element with its content (or, unclosed, all that follows),
 * or one tag, whose quoted values may hold `>`. Text between tags is not matched.
 */
const SVG_MARKUP =
  /<(script|style)\b(?:[^>"']|"[^"]*"|'[^']*')*>[\s\S]*?<\/\1\s*>|<(script|style)\b[\s\S]*$|<[A-Za-z/](?:[^>"']|"[^"]*"|'[^']*')*>?/gi;
/** Every attribute of a tag, in turn (so that no match starts inside a value). */
const ATTRIBUTE = /\s+([^\s=>/"']+)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s"'>]+))?/g;
const URL_REFERENCE = /url\(([^)]*)\)/gi;

function keepSafeAttribute(match: string, name: string, value: string | undefined): string {
  if (/^on/i.test(name)) return '';
  if (/^(?:xlink:)?href$/i.test(name)) {
    const target = (value ?? '').replace(/^["']|["']$/g, '').trim();
    return /^(?:#|data:image\/(?:png|jpeg|gif|webp);)/i.test(target) ? match : '';
  }
  // aria-* and role hold text for assistive technology (vega puts titles there): never a reference.
  if (value === undefined || /^(?:aria-|role$)/i.test(name)) return match;
  return match.slice(0, match.length - value.length) + value.replace(URL_REFERENCE, keepLocalUrl);
}

function keepLocalUrl(match: string, target: string): string {
  return /^\s*['"]?#/.test(target) ? match : 'none';
}

function svgSize(svg: string): { widthPx: number; heightPx: number } {
  const width = /<svg[^>]*\swidth="([\d.]+)"/.exec(svg)?.[1];
  const height = /<svg[^>]*\sheight="([\d.]+)"/.exec(svg)?.[1];
  return { widthPx: Math.round(Number(width ?? 0)), heightPx: Math.round(Number(height ?? 0)) };
}
