import path from 'node:path';
import { ChartPool, renderRunFolder, type ReportFormat } from '../report/index.ts';

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

/**
 * Reports are rendered from a thread's trace when first asked for, once per
 * run folder and version (the number of the last ended turn): a turn that
 * nobody reads costs no render, and a new turn makes a new report.
 *
 * The first request of a version writes HTML, Markdown, the notebook and the
 * trace at once, from one prepared report; PDF (Chromium) only when asked
 * for. Charts come from the run folder's `.chart-cache/`, where the server
 * drew each one as its cell displayed it (chart-drawings.ts): no chart is
 * drawn again. Those drawings are SVG only, so Markdown and the notebook get
 * their PNGs rasterized from the kept SVG (no vega), kept in turn.
 */
export class ReportCache {
  readonly #pending = new Map<string, { version: number; written: Promise<void> }>();
  /** Charts of every report rendered here: drawn by vega, taken from the cache, PNGs rasterized from a kept SVG. */
  readonly chartStats = { drawn: 0, reused: 0, rasterized: 0 };

  async path(runDir: string, format: ReportFormat, version: number): Promise<string> {
    const formats = format === 'pdf' ? (['pdf'] as const) : BUNDLED_FORMATS;
    const key = `${runDir}\n${formats.join(',')}`;
    const cached = this.#pending.get(key);
    let pending = cached?.version === version ? cached.written : undefined;
    if (pending === undefined) {
      pending = (async () => {
        await cached?.written.catch(() => undefined);
        await this.#render(runDir, formats);
      })();
      const entry = { version, written: pending };
      this.#pending.set(key, entry);
      pending.catch(() => {
        if (this.#pending.get(key) === entry) this.#pending.delete(key);
      });
    }
    await pending;
    return path.join(runDir, fileOf[format]);
  }

  async #render(runDir: string, formats: readonly ReportFormat[]): Promise<void> {
    // A pool over the run folder's cache starts no worker when every chart is there.
    const pool = new ChartPool({
      cache: true,
      cacheDir: path.join(runDir, '.chart-cache'),
      idleTimeoutMs: REPORT_WORKERS_IDLE_MS,
    });
    try {
      await renderRunFolder(runDir, { formats, chartPool: pool });
    } finally {
      await pool.close();
      this.chartStats.drawn += pool.stats.drawn;
      this.chartStats.reused += pool.stats.reused;
      this.chartStats.rasterized += pool.stats.rasterized;
    }
  }
}

export function reportFileName(format: ReportFormat): string {
  return fileOf[format];
}
