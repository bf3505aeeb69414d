import { stat } from 'node:fs/promises';
import path from 'node:path';
import { renderRunFolder, type ReportFormat } from '../report/index.ts';

const fileOf: Record<ReportFormat, string> = {
  html: 'report.html',
  md: 'report.md',
  ipynb: 'analysis.ipynb',
  json: 'trace.json',
};

export const reportContentType: Record<ReportFormat, string> = {
  html: 'text/html; charset=utf-8',
  md: 'text/markdown; charset=utf-8',
  ipynb: 'application/x-ipynb+json',
  json: 'application/json',
};

/**
 * Reports are rendered from a run's trace when first asked for, once per
 * run folder and format (a turn that nobody reads costs no render).
 */
export class ReportCache {
  readonly #pending = new Map<string, Promise<string>>();

  async path(runDir: string, format: ReportFormat): Promise<string> {
    const file = path.join(runDir, fileOf[format]);
    const key = `${runDir}\n${format}`;
    let pending = this.#pending.get(key);
    if (pending === undefined) {
      pending = (async () => {
        const exists = await stat(file).then(
          (stats) => stats.isFile(),
          () => false,
        );
        if (!exists) await renderRunFolder(runDir, { formats: [format] });
        return file;
      })();
      this.#pending.set(key, pending);
      pending.catch(() => this.#pending.delete(key));
    }
    return pending;
  }
}

export function reportFileName(format: ReportFormat): string {
  return fileOf[format];
}
