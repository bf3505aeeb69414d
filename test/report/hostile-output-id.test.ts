import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderReport } from '../../src/report/index.ts';
import type { ExecutionRecord } from '../../src/trace/schema.ts';
import { makeSyntheticTrace } from '../fixtures/traces/synthetic-trace.ts';

/**
 * A trace's `outputId` is any string (the trace schema does not hold it to the
 * kernel's `[A-Za-z0-9_-]`): a hostile trace (an old run folder given to
 * `report` or `rerun`) must not turn it into a file path or markup. The
 * figure/chart keys built from it named the Markdown report's `assets/` files
 * and the HTML report's ids and zoom links.
 */
const traversal = '../../escaped';
const markup = 'E9"><a href="https://evil.example/" id="injected">x</a><b x="';

let root = '';
let outDir = '';

function traceWithOutputId(outputId: string) {
  const trace = makeSyntheticTrace({ seed: 3, rounds: 2, charts: 0, figures: 1 });
  const records = trace.records.map((record) => {
    if (record.type !== 'execution' || record.result.figures.length === 0) return record;
    return { ...record, outputId } satisfies ExecutionRecord;
  });
  expect(records.some((record) => record.type === 'execution' && record.outputId === outputId)).toBe(true);
  return { ...trace, records };
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'datalyst-output-id-'));
  outDir = join(root, 'a', 'b');
  await mkdir(outDir, { recursive: true });
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('a trace whose output id is hostile', () => {
  it('writes the Markdown report’s figure inside the report folder (no path traversal)', async () => {
    await renderReport(traceWithOutputId(traversal), { outDir, formats: ['md'] });
    expect(await readdir(join(root, 'a'))).toEqual(['b']);
    expect(await readdir(root)).toEqual(['a']);
    const assets = await readdir(join(outDir, 'assets'));
    expect(assets).toHaveLength(1);
    expect(assets[0]).toMatch(/^[A-Za-z0-9_-]+\.png$/);
  });

  it('puts no markup of it into the HTML report’s ids and links', async () => {
    await renderReport(traceWithOutputId(markup), { outDir, formats: ['html'] });
    const html = await readFile(join(outDir, 'report.html'), 'utf8');
    expect(html).not.toContain('id="injected"');
    expect(html).not.toContain('href="https://evil.example/"');
  });
});
