import path from 'node:path';
import { renderRunFolder, type ReportFormat } from '../report/index.ts';

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

/**
 * Reports are rendered from a thread's trace when first asked for, once per
 * run folder, format and version (the number of the last ended turn): a turn
 * that nobody reads costs no render, and a new turn makes a new report.
 */
export class ReportCache {
  readonly #pending = new Map<string, { version: number; file: Promise<string> }>();

  async path(runDir: string, format: ReportFormat, version: number): Promise<string> {
    const file = path.join(runDir, fileOf[format]);
    const key = `${runDir}\n${format}`;
    const cached = this.#pending.get(key);
    let pending = cached?.version === version ? cached.file : undefined;
    if (pending === undefined) {
      pending = (async () => {
        await cached?.file.catch(() => undefined);
        await renderRunFolder(runDir, { formats: [format] });
        return file;
      })();
      const entry = { version, file: pending };
      this.#pending.set(key, entry);
      pending.catch(() => {
        if (this.#pending.get(key) === entry) this.#pending.delete(key);
      });
    }
    return pending;
  }
}

export function reportFileName(format: ReportFormat): string {
  return fileOf[format];
}
