import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { sanitizeChartSvg } from './chart-svg.ts';
import { installedPackageVersion } from './package-version.ts';
import { MAX_CHART_SVG_BYTES } from './rendered-chart.ts';
import type { RenderedChart } from './rendered-chart.ts';

// Bumped when what a drawn chart holds, or how it is drawn, changes in Datalyst itself.
const CACHE_FORMAT = 1;
const MAX_ENTRY_BYTES = 64 * 1024 * 1024;

const entrySchema = z.object({
  svg: z.string().max(MAX_CHART_SVG_BYTES),
  widthPx: z.number().nonnegative(),
  heightPx: z.number().nonnegative(),
  notes: z.array(z.string().max(10_000)).max(100),
  vegaLiteSpec: z.record(z.string(), z.unknown()).nullable(),
});

/**
 * Drawn charts kept on disk (in a run folder's `.chart-cache/`), so that a
 * report rendered again by another process — `datalyst report` on a run that
 * `analyze` drew while it went on — draws none of them again: charts are
 * nearly all of a report's work (about 0.1 s of CPU per 5 000-point chart).
 * Keyed by the chart's key in the pool (spec content, row cap, id scoping)
 * and the versions of vega, vega-lite and resvg, so an upgrade draws afresh.
 * Only charts that were drawn are kept, never errors (a time limit missed on
 * a busy machine is not the spec's fault). What is read back is checked and
 * its SVG sanitized again: the folder is on the user's disk, not ours.
 */
export class ChartDiskCache {
  private readonly pending = new Set<Promise<void>>();
  private readonly versions: string;

  constructor(readonly dir: string) {
    this.versions = ['vega', 'vega-lite', '@resvg/resvg-js'].map(installedPackageVersion).join(':');
  }

  /** The chart drawn earlier under this key, with its PNG when `png`; null when there is none (or it is unreadable). */
  async read(key: string, png: boolean): Promise<RenderedChart | null> {
    const base = join(this.dir, this.fileName(key));
    try {
      const text = await readFile(`${base}.json`, 'utf8');
      if (text.length > MAX_ENTRY_BYTES) return null;
      const entry = entrySchema.parse(JSON.parse(text));
      const pngBytes = png ? new Uint8Array(await readFile(`${base}.png`)) : null;
      return { ...entry, svg: sanitizeChartSvg(entry.svg), png: pngBytes, error: null };
    } catch {
      return null;
    }
  }

  /** Keeps a drawn chart (in the background; `flush()` waits). Errors are not kept. */
  write(key: string, chart: RenderedChart): void {
    if (chart.svg === null || chart.error !== null) return;
    const { svg, widthPx, heightPx, notes, vegaLiteSpec } = chart;
    const base = join(this.dir, this.fileName(key));
    const write = (async () => {
      await mkdir(this.dir, { recursive: true });
      // Written under a temporary name and renamed: a reader never sees half a file.
      const suffix = `.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
      if (chart.png) {
        await writeFile(`${base}.png${suffix}`, chart.png);
        await rename(`${base}.png${suffix}`, `${base}.png`);
      }
      await writeFile(
        `${base}.json${suffix}`,
        JSON.stringify({ svg, widthPx, heightPx, notes, vegaLiteSpec }),
      );
      await rename(`${base}.json${suffix}`, `${base}.json`);
    })().catch(() => undefined);
    this.pending.add(write);
    void write.finally(() => this.pending.delete(write));
  }

  /** Waits for the charts still being written. */
  async flush(): Promise<void> {
    await Promise.all([...this.pending]);
  }

  private fileName(key: string): string {
    return createHash('sha256').update(`${CACHE_FORMAT}:${this.versions}:${key}`).digest('hex');
  }
}
