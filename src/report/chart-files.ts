import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { basename, extname, join, resolve } from 'node:path';
import { ConfigError } from '../errors/index.ts';
import { ChartPool } from './chart-pool.ts';
import { MAX_DATA_FILE_BYTES, MAX_SPEC_FILE_BYTES } from './chart-worker-protocol.ts';
import type { ChartSource } from './chart-worker-protocol.ts';
import { DEFAULT_MAX_CHART_ROWS } from './rendered-chart.ts';
import type { PdfPrinter } from './pdf.ts';

export const chartFileFormats = ['svg', 'png', 'pdf'] as const;
export type ChartFileFormat = (typeof chartFileFormats)[number];

export interface RenderChartFilesOptions {
  /** vega-lite (or vega) spec files, JSON. */
  specPaths: readonly string[];
  /** A .csv, .tsv or .json file whose rows replace each spec's top-level data. */
  dataPath?: string;
  /** A file (one spec, its extension gives the format) or a folder (one file per spec, created if missing). */
  out: string;
  /** Default: the extension of `out` when it names a file, else svg. */
  format?: ChartFileFormat;
  /** Rows kept per inline dataset. Default 5 000, as in reports. */
  maxRows?: number;
  /** Default: a pool of its own, closed at the end. */
  chartPool?: ChartPool;
  /** Starts the printer for PDF (Chromium); called once, only when the format is pdf. */
  launchPdfPrinter?: () => Promise<PdfPrinter>;
  signal?: AbortSignal;
  /** Told of each chart as it is written or fails, in the order they finish. */
  onChart?: (result: ChartFileResult) => void;
}

export interface ChartFileResult {
  specPath: string;
  /** The file written; null when the chart failed. */
  outPath: string | null;
  error: string | null;
  notes: string[];
}

// The endings a spec file's name loses before the output's extension is added.
const SPEC_SUFFIX = /\.(?:vl|vg)?\.?json$/i;

/**
 * `datalyst chart`: draws spec files to SVG, PNG or PDF through the chart
 * workers and limits the report uses. The spec and data files are read here
 * as text and parsed in the workers (see chart-source.ts). A spec that fails
 * is a result with its error; the others are still written. The input files
 * are never written to.
 */
export async function renderChartFiles(options: RenderChartFilesOptions): Promise<ChartFileResult[]> {
  const specPaths = options.specPaths.map((path) => resolve(path));
  if (specPaths.length === 0)
    throw new ConfigError('No spec file was given.', 'Pass one or more vega-lite spec files (*.vl.json).');
  const plan = await planOutputs(specPaths, resolve(options.out), options.format);
  const inputs = new Set([...specPaths, ...(options.dataPath ? [resolve(options.dataPath)] : [])]);
  for (const { outPath } of plan.outputs)
    if (inputs.has(outPath))
      throw new ConfigError(
        `The output ${outPath} is one of the input files.`,
        'Name another output file or folder with -o: input files are never overwritten.',
      );
  const data = options.dataPath
    ? {
        fileName: basename(options.dataPath),
        text: await readLimited(options.dataPath, MAX_DATA_FILE_BYTES, 'data'),
      }
    : undefined;
  const sources: ChartSource[] = [];
  for (const specPath of specPaths)
    sources.push({
      specText: await readLimited(specPath, MAX_SPEC_FILE_BYTES, 'spec'),
      ...(data ? { data } : {}),
    });
  if (plan.folder) await mkdir(plan.folder, { recursive: true });

  const pool = options.chartPool ?? new ChartPool();
  const printer =
    plan.format === 'pdf'
      ? await (options.launchPdfPrinter ?? (async () => (await import('./pdf.ts')).PdfPrinter.launch()))()
      : null;
  // PDFs are printed one at a time in one browser page, in the order the charts come.
  let printing: Promise<unknown> = Promise.resolve();
  try {
    return await Promise.all(
      plan.outputs.map(async ({ specPath, outPath }, index) => {
        const chart = await pool.renderSource(sources[index] as ChartSource, {
          maxRows: options.maxRows ?? DEFAULT_MAX_CHART_ROWS,
          png: plan.format === 'png',
          // A chart file stands alone: vega's own ids, as vl2svg writes them.
          scopeIds: false,
          ...(options.signal ? { signal: options.signal } : {}),
        });
        let result: ChartFileResult;
        if (chart.svg === null) {
          result = {
            specPath,
            outPath: null,
            error: chart.error ?? 'The chart was not drawn.',
            notes: chart.notes,
          };
        } else if (plan.format === 'png' && chart.png === null) {
          result = {
            specPath,
            outPath: null,
            error: chart.notes.at(-1) ?? 'No PNG was made.',
            notes: chart.notes,
          };
        } else {
          let bytes: string | Uint8Array = chart.svg;
          if (plan.format === 'png') bytes = chart.png as Uint8Array;
          if (printer) {
            const { chartPageHtml } = await import('./pdf.ts');
            const svg = chart.svg;
            const printed = printing.then(() =>
              printer.print(chartPageHtml(svg), { widthPx: chart.widthPx, heightPx: chart.heightPx }),
            );
            printing = printed.catch(() => undefined);
            bytes = await printed;
          }
          await writeFile(outPath, bytes);
          result = { specPath, outPath, error: null, notes: chart.notes };
        }
        options.onChart?.(result);
        return result;
      }),
    );
  } finally {
    await printer?.close();
    if (!options.chartPool) await pool.close();
  }
}

interface OutputPlan {
  format: ChartFileFormat;
  /** The folder the outputs go to when `out` is one; null for a single file. */
  folder: string | null;
  outputs: Array<{ specPath: string; outPath: string }>;
}

async function planOutputs(
  specPaths: string[],
  out: string,
  format: ChartFileFormat | undefined,
): Promise<OutputPlan> {
  const outExtension = extname(out).slice(1).toLowerCase();
  const outIsFolder = await stat(out).then(
    (info) => info.isDirectory(),
    () => false,
  );
  const namesFile = !outIsFolder && isChartFileFormat(outExtension);
  if (!outIsFolder && imageExtensions.has(outExtension))
    throw new ConfigError(
      `-o ${out} names a .${outExtension} file, which Datalyst does not write (it would be made a folder).`,
      `Name a .svg, .png or .pdf file, or a folder.`,
    );
  if (namesFile) {
    if (format !== undefined && format !== outExtension)
      throw new ConfigError(
        `-o ${out} names a .${outExtension} file but --format is ${format}.`,
        `Drop --format, or name a .${format} file.`,
      );
    if (specPaths.length > 1)
      throw new ConfigError(
        `-o names one file, ${out}, but ${specPaths.length} specs were given.`,
        'Name a folder with -o to draw several specs (one file per spec).',
      );
    return {
      format: outExtension,
      folder: null,
      outputs: [{ specPath: specPaths[0] as string, outPath: out }],
    };
  }
  const chosen = format ?? 'svg';
  const byName = new Map<string, string>();
  const outputs = specPaths.map((specPath) => {
    const name = `${basename(specPath).replace(SPEC_SUFFIX, '') || 'chart'}.${chosen}`;
    const earlier = byName.get(name);
    if (earlier !== undefined)
      throw new ConfigError(
        `${earlier} and ${specPath} would both be written to ${name}.`,
        'Give the spec files different names, or draw them in separate commands.',
      );
    byName.set(name, specPath);
    return { specPath, outPath: join(out, name) };
  });
  return { format: chosen, folder: out, outputs };
}

/** Image and document types `-o` might name by mistake: refused rather than taken for a folder name. */
const imageExtensions = new Set([
  'jpg',
  'jpeg',
  'gif',
  'webp',
  'bmp',
  'tif',
  'tiff',
  'eps',
  'ps',
  'html',
  'htm',
]);

function isChartFileFormat(value: string): value is ChartFileFormat {
  return (chartFileFormats as readonly string[]).includes(value);
}

/** Reads a file as text, refusing one past `maxBytes` before reading it. */
async function readLimited(path: string, maxBytes: number, what: 'spec' | 'data'): Promise<string> {
  const info = await stat(path).catch((error: unknown) => {
    throw new ConfigError(
      `There is no ${what} file at ${path}.`,
      `Check the path of the ${what} file.`,
      error,
    );
  });
  if (!info.isFile())
    throw new ConfigError(`The ${what} path ${path} is not a file.`, `Pass a ${what} file, not a folder.`);
  if (info.size > maxBytes)
    throw new ConfigError(
      `The ${what} file ${path} is ${(info.size / 1024 / 1024).toFixed(1)} MB, more than the ${maxBytes / 1024 / 1024} MB a chart reads.`,
      what === 'data'
        ? 'Aggregate or sample the data first.'
        : 'Put the data in a separate file and pass it with --data.',
    );
  return readFile(path, 'utf8');
}
