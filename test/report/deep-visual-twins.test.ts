import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderDeepRunFolder } from '../../src/report/index.ts';
import { buildRecordedDeepRun } from '../deep/support/recorded-deep-run.ts';

/**
 * What broke: the same figure, drawn by two sub-analyses (one a join's), was shown twice in one
 * section. A visual the same as one placed before (the same chart spec, the same image) is shown once;
 * the other's cell and evidence link to it.
 */

let root = '';
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'datalyst-deep-twins-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Makes `to`'s figure the same image as `from`'s, in the sub-analyses' traces of the run folder. */
async function sameFigure(runDir: string, from: [string, string], to: [string, string]): Promise<void> {
  const read = async (sub: string) =>
    (await readFile(join(runDir, 'sub', sub, 'trace.jsonl'), 'utf8'))
      .split('\n')
      .map((line) => (line.trim() === '' ? null : (JSON.parse(line) as Record<string, unknown>)));
  const execution = (records: Array<Record<string, unknown> | null>, outputId: string) =>
    records.find((record) => record?.type === 'execution' && record.outputId === outputId) as {
      result: { figures: Array<{ dataBase64: string; widthPx: number; heightPx: number }> };
    };
  const source = execution(await read(from[0]), from[1]).result.figures[0];
  const records = await read(to[0]);
  const target = execution(records, to[1]).result.figures[0];
  if (source === undefined || target === undefined) throw new Error('fixture changed');
  Object.assign(target, {
    dataBase64: source.dataBase64,
    widthPx: source.widthPx,
    heightPx: source.heightPx,
  });
  await writeFile(
    join(runDir, 'sub', to[0], 'trace.jsonl'),
    records.map((record) => (record === null ? '' : JSON.stringify(record))).join('\n'),
  );
}

describe('a figure two sub-analyses drew alike', () => {
  it('is shown once in the section, the other cell pointing to it', async () => {
    const outDir = join(root, 'twins');
    await buildRecordedDeepRun(outDir);
    // EV15 (S2) and EV22 (S3), both in the enrolled.csv section, cite S2:E6 and S3:E6's figure.
    await sameFigure(outDir, ['S2', 'E6'], ['S3', 'E6']);
    await renderDeepRunFolder(outDir, { formats: ['html', 'md'], now: new Date(0) });
    const html = await readFile(join(outDir, 'report.html'), 'utf8');
    const placed = Array.from(html.matchAll(/<figure class="figure" id="(visual-[^"]+)"/g), (m) => m[1]);
    expect(placed).toContain('visual-S2_E6-figure-1');
    expect(placed).not.toContain('visual-S3_E6-figure-1');
    expect(new Set(placed).size).toBe(placed.length);
    // S3's cell says where its figure is shown, and so does its evidence item.
    expect(html).toContain(
      '<a href="#visual-S2_E6-figure-1">Figure 1 of S3:E6</a> is shown with the section it supports (the same as Figure 1 of S2:E6).',
    );
    const targets = Array.from(html.matchAll(/href="#([^"]+)"/g), (m) => m[1] ?? '');
    const anchors = new Set(Array.from(html.matchAll(/\sid="([^"]+)"/g), (m) => m[1] ?? ''));
    expect(targets.filter((target) => !anchors.has(target))).toEqual([]);
    const markdown = await readFile(join(outDir, 'report.md'), 'utf8');
    expect(markdown.match(/!\[Figure 1 of S3:E6\]/g)).toBeNull();
    expect(markdown.match(/!\[Figure 1 of S2:E6\]/g)).toHaveLength(1);
  });
});
