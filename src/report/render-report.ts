import { copyFile, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, normalize, resolve, sep } from 'node:path';
import { TraceError } from '../errors/index.ts';
import { readTrace } from '../trace/reader.ts';
import { TRACE_VERSION } from '../trace/schema.ts';
import type { TraceDocument, TraceRecord } from '../trace/schema.ts';
import type { ChartPool } from './chart-pool.ts';
import { renderHtmlReport } from './html-report.ts';
import type { ArtifactImages } from './html-report.ts';
import { renderMarkdownReport } from './markdown-report.ts';
import { renderNotebook } from './notebook.ts';
import type { GroundingSummary } from '../trace/number-grounding.ts';
import { withPdfPrinterStarting, type PdfPrinter } from './pdf.ts';
import type { ReportAudience } from './outcome-look.ts';
import { prepareReport } from './prepared-report.ts';
import { assertRenderReportOptions, assertRenderRunFolderOptions } from './report-options.ts';
import type { ConversationGrounding } from './prepared-report.ts';

export type ReportFormat = 'html' | 'md' | 'ipynb' | 'json' | 'pdf';

/** The formats written by default; `pdf` only when asked for (it needs Chromium). */
export const allReportFormats: readonly ReportFormat[] = ['html', 'md', 'ipynb', 'json'];

export interface RenderReportOptions {
  /** The folder the report files are written to (usually the run folder). */
  outDir: string;
  /** Default: all of `html`, `md`, `ipynb`, `json`. `pdf` prints the HTML report with headless Chromium (pdf.ts). */
  formats?: readonly ReportFormat[];
  /** The Chromium that prints `pdf`; default /usr/bin/chromium. */
  chromiumPath?: string;
  /** Where the run's artifacts are; default `<outDir>/artifacts`. Copied into `<outDir>/artifacts` when elsewhere. */
  artifactsDir?: string;
  /** Rows kept per inline chart dataset. Default 5 000. */
  maxChartRows?: number;
  signal?: AbortSignal;
  /** Fixed "generated at" time, for byte-stable output. */
  now?: Date;
  /** Worker processes that draw the charts; default: `sharedChartPool()`. */
  chartPool?: ChartPool;
  /** Who acts on an unanswered run's advice: `cli` (default, commands and flags) or `server` (ask again in the thread). */
  audience?: ReportAudience;
}

export interface RenderedReport {
  /** Absolute paths of the files written. */
  files: string[];
  /** Numbers of the answer (a thread's last answer) checked against the outputs. */
  grounding: GroundingSummary;
  /** A thread of several questions: its answers and their numbers together; null for one question. */
  conversation: ConversationGrounding | null;
  charts: { rendered: number; failed: number };
  /** Time per stage: `prepare` (charts, grounding) is shared by the formats. */
  timingsMs: Record<'prepare' | ReportFormat, number>;
  /** Size of report.html in bytes; 0 when not written. */
  htmlBytes: number;
}

const imageTypes: Record<string, { mimeType: string; magic: number[] }> = {
  png: { mimeType: 'image/png', magic: [0x89, 0x50, 0x4e, 0x47] },
  jpg: { mimeType: 'image/jpeg', magic: [0xff, 0xd8, 0xff] },
  jpeg: { mimeType: 'image/jpeg', magic: [0xff, 0xd8, 0xff] },
  gif: { mimeType: 'image/gif', magic: [0x47, 0x49, 0x46, 0x38] },
  webp: { mimeType: 'image/webp', magic: [0x52, 0x49, 0x46, 0x46] },
};
const MAX_EMBEDDED_IMAGE_BYTES = 5 * 1024 * 1024;
const MAX_EMBEDDED_IMAGES_TOTAL_BYTES = 30 * 1024 * 1024;

/**
 * Renders a trace into a run folder: `report.html` (self-contained),
 * `report.md` with `assets/`, `analysis.ipynb` and `trace.json`. Charts are
 * rendered once and shared by all formats.
 */
export async function renderReport(
  trace: TraceDocument | readonly TraceRecord[],
  options: RenderReportOptions,
): Promise<RenderedReport> {
  assertRenderReportOptions(options);
  return withPdfPrinterStarting(
    (options.formats ?? allReportFormats).includes('pdf'),
    options.chromiumPath,
    (printer) => renderFormats(trace, options, printer),
  );
}

async function renderFormats(
  trace: TraceDocument | readonly TraceRecord[],
  options: RenderReportOptions,
  printer: Promise<PdfPrinter> | null,
): Promise<RenderedReport> {
  const records = 'records' in trace ? trace.records : trace;
  const formats = new Set(options.formats ?? allReportFormats);
  const outDir = resolve(options.outDir);
  const artifactsDir = resolve(options.artifactsDir ?? join(outDir, 'artifacts'));
  const files: string[] = [];
  const timingsMs: RenderedReport['timingsMs'] = { prepare: 0, html: 0, md: 0, ipynb: 0, json: 0, pdf: 0 };
  const timed = async <T>(
    stage: keyof RenderedReport['timingsMs'],
    work: () => Promise<T> | T,
  ): Promise<T> => {
    const started = performance.now();
    try {
      return await work();
    } finally {
      timingsMs[stage] += performance.now() - started;
      options.signal?.throwIfAborted();
    }
  };

  await mkdir(outDir, { recursive: true });
  const report = await timed('prepare', () =>
    prepareReport(records, {
      chartPng: formats.has('md') || formats.has('ipynb'),
      ...(options.maxChartRows === undefined ? {} : { maxChartRows: options.maxChartRows }),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.now ? { now: options.now } : {}),
      ...(options.chartPool ? { chartPool: options.chartPool } : {}),
      ...(options.audience ? { audience: options.audience } : {}),
    }),
  );
  const artifactPaths = report.view.artifacts.map((artifact) => artifact.path).filter(isSafeRelativePath);
  if (artifactsDir !== join(outDir, 'artifacts'))
    await copyArtifacts(artifactPaths, artifactsDir, join(outDir, 'artifacts'));
  // Every format that shows the images a cell saved as files: the PDF is the HTML printed.
  const artifactImages =
    formats.has('html') || formats.has('pdf') || formats.has('md')
      ? await readEmbeddableImages(artifactPaths, join(outDir, 'artifacts'))
      : new Map();

  let htmlBytes = 0;
  let html = '';
  if (formats.has('html') || formats.has('pdf')) {
    await timed('html', async () => {
      html = renderHtmlReport(report, { artifactImages });
      if (!formats.has('html')) return;
      htmlBytes = Buffer.byteLength(html);
      files.push(await write(join(outDir, 'report.html'), html));
    });
  }
  if (formats.has('md')) {
    await timed('md', async () => {
      const { markdown, assets } = renderMarkdownReport(report, {
        artifactImages: new Set(artifactImages.keys()),
      });
      await rm(join(outDir, 'assets'), { recursive: true, force: true });
      for (const asset of assets) files.push(await write(join(outDir, asset.path), asset.bytes));
      files.push(await write(join(outDir, 'report.md'), markdown));
    });
  }
  if (formats.has('ipynb')) {
    await timed('ipynb', async () => {
      files.push(
        await write(join(outDir, 'analysis.ipynb'), `${JSON.stringify(renderNotebook(report), null, 1)}\n`),
      );
    });
  }
  if (formats.has('json')) {
    await timed('json', async () => {
      const document: TraceDocument = { version: TRACE_VERSION, records: [...records] };
      files.push(await write(join(outDir, 'trace.json'), JSON.stringify(document)));
    });
  }
  if (printer) {
    await timed('pdf', async () => {
      const pdf = await (await printer).print(html);
      files.push(await write(join(outDir, 'report.pdf'), pdf));
    });
  }
  const charts = [...report.charts.values()];
  return {
    files,
    grounding: report.grounding,
    conversation: report.conversation,
    charts: {
      rendered: charts.filter((chart) => chart.svg !== null).length,
      failed: charts.filter((chart) => chart.svg === null).length,
    },
    timingsMs,
    htmlBytes,
  };
}

export interface RenderRunFolderOptions extends Omit<RenderReportOptions, 'outDir' | 'artifactsDir'> {
  /** Default: the run folder itself. */
  outDir?: string;
}

/**
 * Re-renders a run folder's report from its `trace.jsonl` (or `trace.json`).
 * An unknown option or format is a ConfigError naming it, before anything is written.
 */
export async function renderRunFolder(
  runDir: string,
  options: RenderRunFolderOptions = {},
): Promise<RenderedReport> {
  assertRenderRunFolderOptions(options);
  const tracePath = await findTrace(runDir);
  const trace = await readTrace(tracePath, options.signal ? { signal: options.signal } : {});
  return renderReport(trace, {
    ...options,
    outDir: options.outDir ?? runDir,
    artifactsDir: join(runDir, 'artifacts'),
  });
}

/** A run folder's trace: `trace.jsonl` as the library appends it, else `trace.json` (older runs); a TraceError when neither is there. */
export async function findTrace(runDir: string): Promise<string> {
  for (const name of ['trace.jsonl', 'trace.json']) {
    const path = join(runDir, name);
    if (
      await stat(path).then(
        (stats) => stats.isFile(),
        () => false,
      )
    )
      return path;
  }
  throw new TraceError(`No trace.jsonl or trace.json in ${runDir}.`);
}

async function write(path: string, content: string | Uint8Array): Promise<string> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, content);
  return path;
}

/** Artifact paths come from the trace: only plain relative paths inside `artifacts/` are used. */
function isSafeRelativePath(path: string): boolean {
  if (path === '' || isAbsolute(path) || path.includes('\0')) return false;
  const normalized = normalize(path);
  return !normalized.startsWith('..') && !normalized.split(sep).includes('..');
}

async function copyArtifacts(paths: readonly string[], fromDir: string, toDir: string): Promise<void> {
  for (const path of paths) {
    const target = join(toDir, path);
    await mkdir(dirname(target), { recursive: true });
    // A trace rendered away from its run folder may have lost its artifacts: the report still renders.
    await copyFile(join(fromDir, path), target).catch(() => undefined);
  }
}

/**
 * The images among `paths` (files of `dir`) that a report may embed: a known
 * image type by name and by their first bytes, at most 5 MB each and 30 MB
 * together; the rest are left out. `paths` must already be known to stay
 * inside `dir`.
 */
export async function readEmbeddableImages(paths: readonly string[], dir: string): Promise<ArtifactImages> {
  const images = new Map<string, { mimeType: string; base64: string }>();
  let totalBytes = 0;
  for (const path of paths) {
    const type = imageTypes[path.split('.').pop()?.toLowerCase() ?? ''];
    if (!type) continue;
    const bytes = await readFile(join(dir, path)).catch(() => null);
    if (
      bytes === null ||
      bytes.length > MAX_EMBEDDED_IMAGE_BYTES ||
      totalBytes + bytes.length > MAX_EMBEDDED_IMAGES_TOTAL_BYTES
    )
      continue;
    if (!type.magic.every((byte, index) => bytes[index] === byte)) continue;
    totalBytes += bytes.length;
    images.set(path, { mimeType: type.mimeType, base64: bytes.toString('base64') });
  }
  return images;
}
