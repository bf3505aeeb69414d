import { copyFile, mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { ChartPool } from './chart-pool.ts';
import { withPdfPrinterStarting, type PdfPrinter } from './pdf.ts';
import { renderDeepHtmlReport } from './deep-report.ts';
import { renderDeepMarkdownReport } from './deep-markdown-report.ts';
import { renderDeepNotebook } from './deep-notebook.ts';
import { DEEP_RECORD_FILE } from '../deep/deep-record.ts';
import { prepareDeepReport, type DeepRunState } from './deep-run.ts';

/**
 * The formats a deep report has. `json` is `deep.json` itself (the record,
 * with the sub-analyses' traces beside it): written only when the report goes
 * to another folder, where it is copied. `pdf` is `report.html` printed by
 * headless Chromium (`pdf.ts`), as for a single run's report.
 */
export type DeepReportFormat = 'html' | 'md' | 'ipynb' | 'json' | 'pdf';

/** The formats written by default; `pdf` only when asked for (it needs Chromium). */
export const allDeepReportFormats: readonly DeepReportFormat[] = ['html', 'md', 'ipynb', 'json'];

export interface RenderDeepRunFolderOptions {
  /** Default: the deep run folder itself. */
  outDir?: string;
  /** Default all of `html`, `md`, `ipynb`, `json`. `pdf` prints the HTML report with headless Chromium (pdf.ts). */
  formats?: readonly DeepReportFormat[];
  /** The Chromium that prints `pdf`; default /usr/bin/chromium. */
  chromiumPath?: string;
  /** Rows kept per inline chart dataset. Default 5 000. */
  maxChartRows?: number;
  /** Worker processes that draw the charts; default: `sharedChartPool()`. */
  chartPool?: ChartPool;
  signal?: AbortSignal;
  /** Fixed "generated at" time, for byte-stable output. */
  now?: Date;
}

export interface RenderedDeepReport {
  /** Absolute paths of the files written (`deep.json` only when copied to another folder). */
  files: string[];
  /** Numbers of the written sections checked against the outputs of the evidence they cite. */
  grounding: { checked: number; verified: number; unverified: number };
  charts: { rendered: number; failed: number };
  htmlBytes: number;
  /** Whether the run had ended (`deepRunState`): a report of one still going, or stopped, says so. */
  runState: DeepRunState;
}

/**
 * Renders a deep analysis's run folder (`deep.json` and `sub/<id>/`) into
 * `report.html`, `report.md` (+ `assets/`) and `analysis.ipynb`; its JSON is
 * `deep.json` (copied when `outDir` is another folder); `report.pdf` when
 * `pdf` is asked for (a missing Chromium is a `ChromiumUnavailableError`,
 * thrown after the other formats are written). Each sub-analysis keeps its own
 * run folder; `renderRunFolder(join(runDir, 'sub', 'S1'))` renders one alone.
 *
 * @example
 * await renderDeepRunFolder('runs/20260101-student-loan-deep');
 */
export async function renderDeepRunFolder(
  runDir: string,
  options: RenderDeepRunFolderOptions = {},
): Promise<RenderedDeepReport> {
  return withPdfPrinterStarting(
    (options.formats ?? allDeepReportFormats).includes('pdf'),
    options.chromiumPath,
    (printer) => renderFormats(runDir, options, printer),
  );
}

async function renderFormats(
  runDir: string,
  options: RenderDeepRunFolderOptions,
  printer: Promise<PdfPrinter> | null,
): Promise<RenderedDeepReport> {
  const formats = new Set(options.formats ?? allDeepReportFormats);
  const outDir = resolve(options.outDir ?? runDir);
  const report = await prepareDeepReport(runDir, {
    chartPng: formats.has('md') || formats.has('ipynb'),
    ...(options.maxChartRows === undefined ? {} : { maxChartRows: options.maxChartRows }),
    ...(options.chartPool ? { chartPool: options.chartPool } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
  await mkdir(outDir, { recursive: true });
  const files: string[] = [];
  let htmlBytes = 0;
  // The PDF is the page printed: rendered for it even when report.html is not asked for (and then not written).
  const html = formats.has('html') || formats.has('pdf') ? renderDeepHtmlReport(report) : '';
  if (formats.has('html')) {
    htmlBytes = Buffer.byteLength(html);
    files.push(await write(join(outDir, 'report.html'), html));
  }
  if (formats.has('md')) {
    const { markdown, assets } = renderDeepMarkdownReport(report);
    await rm(join(outDir, 'assets'), { recursive: true, force: true });
    for (const asset of assets) files.push(await write(join(outDir, asset.path), asset.bytes));
    files.push(await write(join(outDir, 'report.md'), markdown));
  }
  if (formats.has('ipynb')) {
    const notebook = `${JSON.stringify(renderDeepNotebook(report), null, 1)}\n`;
    files.push(await write(join(outDir, 'analysis.ipynb'), notebook));
  }
  if (formats.has('json')) {
    // The deep run's JSON is its record: copied when the report goes elsewhere, and then listed
    // (where it is, nothing is written: a list naming it said it had been).
    const recordPath = join(outDir, DEEP_RECORD_FILE);
    if (outDir !== resolve(runDir)) {
      await copyFile(join(runDir, DEEP_RECORD_FILE), recordPath);
      files.push(recordPath);
    }
  }
  if (printer) {
    const pdf = await (await printer).print(html);
    options.signal?.throwIfAborted();
    files.push(await write(join(outDir, 'report.pdf'), pdf));
  }
  const numbers = report.sections.flatMap((view) => view.html.numbers);
  const verified = numbers.filter((number) => number.verified).length;
  const charts = [...report.charts.values()];
  return {
    files,
    grounding: { checked: numbers.length, verified, unverified: numbers.length - verified },
    charts: {
      rendered: charts.filter((chart) => chart.svg !== null).length,
      failed: charts.filter((chart) => chart.svg === null).length,
    },
    htmlBytes,
    runState: report.runState,
  };
}

async function write(path: string, content: string | Uint8Array): Promise<string> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, content);
  return path;
}
