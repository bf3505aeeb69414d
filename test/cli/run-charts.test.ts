import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { drawRunCharts, reportNeedsChartPng } from '../../src/cli/run-charts.ts';
import { ChartPool, renderRunFolder } from '../../src/report/index.ts';
import type { CellResult } from '../../src/sandbox/cell-result.ts';
import { makeSyntheticTrace } from '../fixtures/traces/synthetic-trace.ts';

describe('charts drawn while a run or chat goes on (run-charts.ts)', () => {
  it('draws each chart as its cell ends, so the report draws none and a later process finds them in .chart-cache', async () => {
    const outDir = await mkdtemp(join(tmpdir(), 'datalyst-run-charts-'));
    try {
      const trace = makeSyntheticTrace({ seed: 7, rounds: 4, charts: 2, chartPoints: 200, figures: 1 });
      await writeFile(
        join(outDir, 'trace.json'),
        JSON.stringify({ version: trace.version, records: trace.records }),
      );
      const charts = await drawRunCharts({ outDir, png: reportNeedsChartPng(['html', 'md']) });
      try {
        for (const record of trace.records) {
          // Events that carry no cell result are ignored.
          charts.observe({ type: 'round-start', round: 1, maxRounds: 4 } as never);
          if (record.type === 'execution')
            charts.observe({
              type: 'execution-end',
              round: record.round,
              outputId: record.outputId,
              // A trace's cells may also be `cancelled`; an event's never are, and these are not.
              result: record.result as CellResult,
            });
        }
        const rendered = await renderRunFolder(outDir, { formats: ['html', 'md'], chartPool: charts.pool });
        expect(rendered.charts).toEqual({ rendered: 2, failed: 0 });
        // The report took both from what the run drew: nothing was drawn twice.
        expect(charts.pool.stats).toEqual({ drawn: 2, reused: 2, rasterized: 0 });
      } finally {
        await charts.close();
      }
      expect(
        (await readdir(join(outDir, '.chart-cache'))).filter((name) => name.endsWith('.json')),
      ).toHaveLength(2);

      const later = new ChartPool({ cache: true, cacheDir: join(outDir, '.chart-cache') });
      try {
        await renderRunFolder(outDir, { formats: ['html', 'md'], chartPool: later });
        expect(later.stats).toEqual({ drawn: 0, reused: 2, rasterized: 0 });
        expect(later.workerPids()).toEqual([]);
      } finally {
        await later.close();
      }
    } finally {
      await rm(outDir, { recursive: true, force: true });
    }
  });

  it('starts its workers at once with `warm` (analyze starts them with the run), and none without', async () => {
    const outDir = await mkdtemp(join(tmpdir(), 'datalyst-run-charts-warm-'));
    const warm = await drawRunCharts({ outDir, png: false, warm: true });
    const lazy = await drawRunCharts({ outDir, png: false });
    try {
      expect(warm.pool.workerPids().length).toBeGreaterThan(0);
      expect(lazy.pool.workerPids()).toEqual([]);
    } finally {
      await Promise.all([warm.close(), lazy.close()]);
      await rm(outDir, { recursive: true, force: true });
    }
  });

  it('asks for PNGs only when Markdown or the notebook is written', () => {
    expect(reportNeedsChartPng(['html', 'json'])).toBe(false);
    expect(reportNeedsChartPng(['html', 'ipynb'])).toBe(true);
    expect(reportNeedsChartPng(['md'])).toBe(true);
  });
});
