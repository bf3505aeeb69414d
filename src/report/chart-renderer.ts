import { renderAsync } from '@resvg/resvg-js';
import * as vega from 'vega';
import { expressionInterpreter } from 'vega-interpreter';
import * as vegaLite from 'vega-lite';
import { z } from 'zod';

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
}

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

// Just enough to tell vega from vega-lite; vega-lite's compiler checks the rest.
const specSchema = z.looseObject({ $schema: z.string().optional() });

/** Renders one spec. Never throws for a bad spec; throws only when aborted. */
export async function renderChart(spec: unknown, options: ChartRenderOptions = {}): Promise<RenderedChart> {
  const maxRows = options.maxRows ?? DEFAULT_MAX_CHART_ROWS;
  const failed = (error: string, notes: string[] = []): RenderedChart => ({ svg: null, png: null, widthPx: 0, heightPx: 0, error, notes, vegaLiteSpec: null });
  const parsed = specSchema.safeParse(spec);
  if (!parsed.success) return failed('The chart spec is not a JSON object.');
  const notes: string[] = [];
  const capped = capSpecData(parsed.data, maxRows, notes);
  const isPlainVega = /\/schema\/vega\/v\d/.test(capped.$schema ?? '');
  if (!isPlainVega && largestDataset(capped) > ARIA_MAX_ROWS) {
    // One aria-label per point makes a 5 000-point SVG half again as large and
    // slower to build, and helps no screen reader; the chart keeps its title.
    capped.config = { ...(isRecord(capped.config) ? capped.config : {}), aria: false };
  }
  let vegaSpec: vega.Spec;
  try {
    // The compilers check the spec's shape themselves and throw on what they cannot use.
    vegaSpec = isPlainVega ? (capped as vega.Spec) : vegaLite.compile(capped as unknown as vegaLite.TopLevelSpec, { logger: silentLogger() }).spec;
  } catch (error) {
    return failed(`The vega-lite spec does not compile: ${messageOf(error)}`, notes);
  }
  let svg: string;
  let view: vega.View | undefined;
  try {
    const runtime = vega.parse(vegaSpec, undefined, { ast: true });
    view = new vega.View(runtime, { renderer: 'none', loader: offlineLoader(), expr: expressionInterpreter, logLevel: vega.None });
    svg = sanitizeChartSvg(compactSvgNumbers(await view.toSVG()));
  } catch (error) {
    return failed(`The chart could not be drawn: ${messageOf(error)}`, notes);
  } finally {
    view?.finalize();
  }
  options.signal?.throwIfAborted();
  const size = svgSize(svg);
  let png: Uint8Array | null = null;
  if (options.png !== false) {
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
  const refuse = (uri: string): Promise<never> => Promise.reject(new Error(`Loading ${uri} is not allowed in a report.`));
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
 * and removes remote data (`data.url`), in a copy of the spec.
 */
export function capSpecData(spec: Record<string, unknown>, maxRows: number, notes: string[]): Record<string, unknown> & { $schema?: string } {
  const copy = structuredClone(spec);
  const visit = (node: unknown, key: string | null): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item, null);
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    const record = node as Record<string, unknown>;
    if (key === 'datasets') {
      for (const [name, rows] of Object.entries(record)) {
        if (Array.isArray(rows) && rows.length > maxRows) {
          notes.push(`Dataset "${name}" has ${rows.length.toLocaleString('en-US')} rows; the chart shows the first ${maxRows.toLocaleString('en-US')}.`);
          record[name] = rows.slice(0, maxRows);
        }
      }
      return;
    }
    if (key === 'data') {
      if ('url' in record) {
        notes.push(`Remote data (${String(record.url).slice(0, 80)}) was not loaded: a report never fetches.`);
        delete record.url;
        record.values = [];
      }
      if (Array.isArray(record.values) && record.values.length > maxRows) {
        notes.push(`The inline data has ${record.values.length.toLocaleString('en-US')} rows; the chart shows the first ${maxRows.toLocaleString('en-US')}.`);
        record.values = record.values.slice(0, maxRows);
      }
    }
    for (const [childKey, child] of Object.entries(record)) {
      if (typeof child === 'object' && child !== null) visit(child, childKey);
    }
  };
  visit(copy, null);
  return copy;
}

const ARIA_MAX_ROWS = 1_000;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function largestDataset(spec: Record<string, unknown>): number {
  let largest = 0;
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      largest = Math.max(largest, node.length);
      if (node.length > 0 && typeof node[0] !== 'object') return;
      for (const item of node.slice(0, 50)) visit(item);
      return;
    }
    if (!isRecord(node)) return;
    for (const [key, child] of Object.entries(node)) if (key !== 'values' || Array.isArray(child)) visit(child);
  };
  visit(spec);
  return largest;
}

/** Two decimals are plenty for pixel coordinates and cut the size of big scatter plots. */
function compactSvgNumbers(svg: string): string {
  return svg.replace(/ (d|transform|points)="([^"]*)"/g, (_match, name: string, value: string) => ` ${name}="${value.replace(/(\d+\.\d{2})\d+/g, '$1')}"`);
}

/**
 * Defence in depth for markup made from untrusted specs: vega escapes text,
 * but hrefs (the `href` channel) and url() paint references could point
 * outside the report. Only in-document references and data: images survive.
 */
export function sanitizeChartSvg(svg: string): string {
  return svg
    .replace(/\s(?:xlink:)?href="([^"]*)"/g, (match, value: string) => (/^(?:#|data:image\/(?:png|jpeg|gif|webp);)/i.test(value.trim()) ? match : ''))
    .replace(/="([^"]*url\(([^)]*)\)[^"]*)"/g, (match, _value: string, target: string) => (/^\s*['"]?#/.test(target) ? match : '="none"'))
    .replace(/<script\b[\s\S]*?<\/script>/gi, '')
    .replace(/\son[a-z]+="[^"]*"/gi, '');
}

function svgSize(svg: string): { widthPx: number; heightPx: number } {
  const width = /<svg[^>]*\swidth="([\d.]+)"/.exec(svg)?.[1];
  const height = /<svg[^>]*\sheight="([\d.]+)"/.exec(svg)?.[1];
  return { widthPx: Math.round(Number(width ?? 0)), heightPx: Math.round(Number(height ?? 0)) };
}
