import { mkdir, readFile, readlink, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import pLimit from 'p-limit';
import { ChartPool, findTrace, renderReport, type ReportFormat } from '../report/index.ts';
import { readTrace, type TraceRecord } from '../trace/index.ts';
import { VERSION } from '../version.ts';
import { ServerRequestError } from './http-error.ts';

const fileOf: Record<ReportFormat, string> = {
  html: 'report.html',
  md: 'report.md',
  ipynb: 'analysis.ipynb',
  json: 'trace.json',
  pdf: 'report.pdf',
};

export const reportContentType: Record<ReportFormat, string> = {
  html: 'text/html; charset=utf-8',
  md: 'text/markdown; charset=utf-8',
  ipynb: 'application/x-ipynb+json',
  json: 'application/json',
  pdf: 'application/pdf',
};

/** Written together, from one prepared report, when any of them is first asked for. */
const BUNDLED_FORMATS: readonly ReportFormat[] = ['html', 'md', 'ipynb', 'json'];
/** Idle chart workers of a report end after this; the pool is closed when the report is written anyway. */
const REPORT_WORKERS_IDLE_MS = 10_000;

/** One report of a thread: which part of its trace, and where its files go. */
export interface ReportRequest {
  /** The thread's run folder (its `trace.jsonl`, `artifacts/`, `.chart-cache/`). */
  runDir: string;
  /** The folder the report's files are written to, inside the run folder (`reports/turn-<traceTurn>`). */
  outDir: string;
  /** The report is the trace as it stood when this turn of the trace ended (`traceAsOfTurn`); the turn has ended. */
  traceTurn: number;
}

/**
 * Reports are rendered from a thread's trace when first asked for: a turn
 * that nobody reads costs no render. A turn's report is the trace up to that
 * turn's end, so a saved link keeps its meaning when later turns come (or a
 * killed server leaves a later turn half done). Only ended turns are
 * reported, so those records no longer change: each report is rendered once
 * and kept, and a marker file written after the last of its files says it
 * is whole, so a restart does not render it again (a render cut by a kill
 * leaves no marker and is done again; a marker of another Datalyst version
 * has the report rendered again, so an upgrade reaches kept reports). A turn a killed server cut is
 * reported as the trace holds it then; the `turn-end` a resumed thread later
 * appends for it does not change a report already kept.
 *
 * The first request writes HTML, Markdown, the notebook and the trace at
 * once, from one prepared report; PDF (the HTML printed by Chromium) only
 * when asked for, one at a time. Charts
 * come from the run folder's `.chart-cache/`, where the server drew each one
 * as its cell displayed it (chart-drawings.ts): no chart is drawn again.
 * Those drawings are SVG only, so Markdown and the notebook get their PNGs
 * rasterized from the kept SVG (no vega), kept in turn.
 */
export interface ReportCacheOptions {
  /** The Chromium (or Chrome) binary that prints PDF reports. Default /usr/bin/chromium (`DATALYST_CHROMIUM` in `datalyst serve`). */
  chromiumPath?: string;
}

export class ReportCache {
  readonly #chromiumPath: string | undefined;
  /** Renders under way, by folder and formats: requests that come meanwhile wait for the same one. */
  readonly #pending = new Map<string, Promise<void>>();
  /** One PDF printed at a time: each print starts a Chromium (a few hundred MB), and a page of links may ask for many. */
  readonly #printing = pLimit(1);
  /** Prints that may wait for it; past them a new one is refused (503) rather than queued without end. */
  static readonly maxWaitingPrints = 4;
  /** Charts of every report rendered here: drawn by vega, taken from the cache, PNGs rasterized from a kept SVG. */
  readonly chartStats = { drawn: 0, reused: 0, rasterized: 0 };

  constructor(options: ReportCacheOptions = {}) {
    this.#chromiumPath = options.chromiumPath;
  }

  /**
   * The report file of `format`, written first if needed. A TraceError when the run folder has no trace; for
   * `pdf`, a ChromiumUnavailableError when Chromium is missing or does not start.
   */
  async path(request: ReportRequest, format: ReportFormat): Promise<string> {
    const formats = format === 'pdf' ? (['pdf'] as const) : BUNDLED_FORMATS;
    const file = path.join(request.outDir, fileOf[format]);
    const key = `${request.outDir}\n${formats.join(',')}`;
    let pending = this.#pending.get(key);
    if (
      pending === undefined &&
      format === 'pdf' &&
      this.#printing.pendingCount >= ReportCache.maxWaitingPrints
    ) {
      throw new ServerRequestError(
        503,
        'PDF_BUSY',
        `${this.#printing.pendingCount} PDFs are waiting to be printed, one at a time; no room for another.`,
        {
          fix: 'Retry in a minute, or take the HTML report (the PDF is the HTML printed).',
          fault: 'system',
          retryAfterSeconds: 30,
        },
      );
    }
    if (pending === undefined) {
      // The marker is looked at inside the shared promise: a request that comes while a render ends
      // finds either that render or its marker, never starts a second one over files being sent.
      const written =
        format === 'pdf'
          ? this.#printing(() => this.#ensure(request, formats, file))
          : this.#ensure(request, formats, file);
      const forget = (): void => {
        if (this.#pending.get(key) === written) this.#pending.delete(key);
      };
      written.then(forget, forget);
      this.#pending.set(key, written);
      pending = written;
    }
    await pending;
    return file;
  }

  /**
   * Settles when every render that is under way for the run folder `runDir` now has ended, however it ended:
   * a deleted thread's report still being written (a PDF prints for up to 2 minutes) recreates its folder.
   */
  async settled(runDir: string): Promise<void> {
    const prefix = `${runDir}${path.sep}`;
    const renders = [...this.#pending].filter(([key]) => key.startsWith(prefix)).map(([, render]) => render);
    await Promise.allSettled(renders);
  }

  async #ensure(request: ReportRequest, formats: readonly ReportFormat[], file: string): Promise<void> {
    // The marker holds the version that rendered the files: after an upgrade a kept report is rendered again.
    const marker = path.join(request.outDir, `.rendered-${formats.join('-')}`);
    const renderedBy = await readFile(marker, 'utf8').catch(() => null);
    if (renderedBy === VERSION && (await exists(file))) return;
    await this.#render(request, formats);
    await writeFile(marker, VERSION);
  }

  async #render(request: ReportRequest, formats: readonly ReportFormat[]): Promise<void> {
    const trace = await readTrace(await findTrace(request.runDir));
    const records = traceAsOfTurn(trace.records, request.traceTurn);
    await mkdir(request.outDir, { recursive: true });
    // renderReport embeds the images the code saved from `<outDir>/artifacts` (and the Markdown links there):
    // a relative link to the run's own `artifacts/`, not a copy per turn (the quota counts the link, not the
    // files again). Only that link is accepted there, so the render reads nothing outside the run folder;
    // the routes read artifacts from the run folder itself, never through it.
    const link = path.join(request.outDir, 'artifacts');
    const target = path.relative(request.outDir, path.join(request.runDir, 'artifacts'));
    await symlink(target, link).catch(async (error: unknown) => {
      const ours =
        (error as NodeJS.ErrnoException).code === 'EEXIST' &&
        (await readlink(link).catch(() => null)) === target;
      if (!ours) throw error;
    });
    // A pool over the run folder's cache starts no worker when every chart is there.
    const pool = new ChartPool({
      cache: true,
      cacheDir: path.join(request.runDir, '.chart-cache'),
      idleTimeoutMs: REPORT_WORKERS_IDLE_MS,
    });
    try {
      await renderReport(records, {
        outDir: request.outDir,
        formats,
        chartPool: pool,
        audience: 'server',
        ...(this.#chromiumPath === undefined ? {} : { chromiumPath: this.#chromiumPath }),
      });
    } finally {
      await pool.close();
      this.chartStats.drawn += pool.stats.drawn;
      this.chartStats.reused += pool.stats.reused;
      this.chartStats.rasterized += pool.stats.rasterized;
    }
  }
}

/**
 * The records of a thread's trace as they stood when its turn `turn` ended:
 * everything up to and including that turn's `turn-end`. A turn without one
 * (cut by a killed server whose thread did not resume since, or ended by a
 * bug) runs to the end of the trace, or to where a later question began: its
 * `turn-start`, or the `replay` before it (a resumed thread runs its cells
 * again in a fresh sandbox before the next question's `turn-start`); its
 * report then says it has no end. A thread that resumes first appends the
 * `turn-end` of a turn the process did not live to end (resume-thread.ts).
 */
export function traceAsOfTurn(records: readonly TraceRecord[], turn: number): TraceRecord[] {
  let started = false;
  // A replay since the last turn record: it belongs to the question that follows it.
  let replayAt: number | null = null;
  for (const [index, record] of records.entries()) {
    if (record.type === 'turn-end' || record.type === 'turn-start') {
      if (record.type === 'turn-end' && record.turn === turn) return records.slice(0, index + 1);
      if (record.turn > turn) return records.slice(0, replayAt ?? index);
      if (record.type === 'turn-start' && record.turn === turn) started = true;
      replayAt = null;
    } else if (record.type === 'replay') {
      if (started) return records.slice(0, index);
      replayAt ??= index;
    }
  }
  return [...records];
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

export function reportFileName(format: ReportFormat): string {
  return fileOf[format];
}
