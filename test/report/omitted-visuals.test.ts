import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderReport } from '../../src/report/index.ts';
import type { ExecutionRecord } from '../../src/trace/index.ts';
import { makeSyntheticTrace } from '../fixtures/traces/synthetic-trace.ts';

// The agent keeps figures and charts out of the trace past a per-run cap on
// their bytes (`omitted: true`, no data). Regression: the report called such a
// figure "not a valid PNG", and report.md linked to assets that were never written.
describe('a trace whose figures and charts were omitted past the cap', () => {
  const trace = makeSyntheticTrace({ rounds: 4, charts: 1, figures: 1 });
  for (const record of trace.records) {
    if (record.type !== 'execution') continue;
    const result = record.result as ExecutionRecord['result'];
    result.figures = result.figures.map((figure) => ({
      ...figure,
      dataBase64: '',
      omitted: true,
      sizeBytes: 700_000,
    }));
    result.charts = result.charts.map((chart) => ({
      id: chart.id,
      spec: {},
      omitted: true,
      sizeBytes: 9_000_000,
    }));
  }
  let outDir = '';
  let root = '';
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'datalyst-omitted-'));
    outDir = join(root, 'run');
    await renderReport(trace, { outDir, now: new Date('2025-03-02T00:00:00Z') });
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('says in every format why the visual is missing', async () => {
    const html = await readFile(join(outDir, 'report.html'), 'utf8');
    const markdown = await readFile(join(outDir, 'report.md'), 'utf8');
    const notebook = await readFile(join(outDir, 'analysis.ipynb'), 'utf8');
    for (const text of [html, markdown, notebook]) {
      expect(text).toContain('was not kept in the trace');
      expect(text).toContain('cap on figure bytes was spent');
    }
    expect(html).not.toContain('not a valid PNG');
  });

  it('links no asset that was not written', async () => {
    const markdown = await readFile(join(outDir, 'report.md'), 'utf8');
    const written = new Set(await readdir(join(outDir, 'assets')).catch(() => []));
    const linked = [...markdown.matchAll(/\(assets\/([^)\s]+)\)/g)].map((match) => match[1]);
    for (const asset of linked) expect(written, `assets/${asset}`).toContain(asset);
  });
});
