import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeepRecord } from '../../src/deep/index.ts';
import { notebookSchema, renderDeepRunFolder } from '../../src/report/index.ts';
import type { Notebook } from '../../src/report/index.ts';
import { hostile } from '../deep/support/hostile-deep-record.ts';
import { buildRecordedDeepRun } from '../deep/support/recorded-deep-run.ts';

/**
 * The deep run's notebook (`analysis.ipynb`) on the recorded offline deep run
 * of student-loan: a valid nbformat 4 document with the brief, each section
 * and its evidence as markdown, then every sub-analysis's cells under its
 * heading with the outputs they had; and `json` is `deep.json` itself.
 */

let root = '';
let record: DeepRecord;
let notebook: Notebook;
let files: string[] = [];

const text = (source: string | string[]) => (Array.isArray(source) ? source.join('') : source);

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'datalyst-deep-notebook-'));
  record = await buildRecordedDeepRun(join(root, 'plain'));
  ({ files } = await renderDeepRunFolder(join(root, 'plain'), { now: new Date(0) }));
  notebook = notebookSchema.parse(
    JSON.parse(await readFile(join(root, 'plain', 'analysis.ipynb'), 'utf8')) as unknown,
  );
}, 60_000);
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('the deep notebook', () => {
  it('is written by default with the other formats (deep.json, the json, is already there: not listed as written)', () => {
    const written = files.map((file) => file.slice(join(root, 'plain').length + 1));
    expect(written).toEqual(expect.arrayContaining(['analysis.ipynb', 'report.html', 'report.md']));
    expect(written).not.toContain('deep.json');
    expect(notebook.nbformat).toBe(4);
    expect(new Set(notebook.cells.map((cell) => cell.id)).size).toBe(notebook.cells.length);
  });

  it('has the brief, then each section with the claims of the evidence it cites, before the sub-analyses', () => {
    const markdown = notebook.cells
      .filter((cell) => cell.cell_type === 'markdown')
      .map((cell) => text(cell.source));
    const brief = markdown.findIndex((source) => source.startsWith('## Brief'));
    const subs = markdown.findIndex((source) => source === '# Sub-analyses');
    expect(brief).toBeGreaterThan(0);
    for (const question of record.brief?.questions ?? [])
      expect(markdown[brief]).toContain(question.question);
    for (const section of record.sections) {
      const at = markdown.findIndex((source) => source.startsWith(`## ${section.title}`));
      expect(at, section.title).toBeGreaterThan(brief);
      expect(at).toBeLessThan(subs);
      const outline = record.outline?.sections.find((entry) => entry.id === section.id);
      for (const id of outline?.evidenceIds ?? []) {
        const item = record.evidence.find((entry) => entry.id === id);
        expect(markdown[at]).toContain(`**${id}** (${item?.outputs.join(', ')}): `);
      }
    }
  });

  it("has each sub-analysis's cells under its heading, with the outputs and figures they had", () => {
    const headings = notebook.cells
      .map((cell, index) => ({ cell, index }))
      .filter(({ cell }) => cell.cell_type === 'markdown' && /^## S\d+: /.test(text(cell.source)));
    expect(headings.map(({ cell }) => text(cell.source).split(':')[0])).toEqual(
      record.subAnalyses.map((sub) => `## ${sub.id}`),
    );
    const code = notebook.cells.flatMap((cell) => (cell.cell_type === 'code' ? [cell] : []));
    const outputIds = code.map(
      (cell) => (cell.metadata.datalyst as { outputId?: string } | undefined)?.outputId,
    );
    expect(code[0]?.metadata.datalyst).toEqual({ setup: true });
    for (const sub of record.subAnalyses) {
      const cells = code.filter((cell) => cell.id.startsWith(`${sub.id}-E`));
      expect(cells.length, sub.id).toBeGreaterThan(0);
      const headingAt =
        headings.find(({ cell }) => text(cell.source).startsWith(`## ${sub.id}:`))?.index ?? -1;
      expect(notebook.cells.indexOf(cells[0]!)).toBeGreaterThan(headingAt);
    }
    expect(outputIds.filter((id) => id !== undefined).length).toBeGreaterThan(4);
    // The cells printed what the evidence quotes: a claim's text is in its cell's stdout.
    const first = record.evidence[0];
    const [subId, outputId] = (first?.outputs[0] ?? '').split(':');
    const cell = code.find((entry) => entry.id === `${subId}-${outputId}`);
    const stdout = cell?.outputs.flatMap((output) =>
      output.output_type === 'stream' ? [text(output.text)] : [],
    );
    expect(stdout?.join('')).toContain(first?.claim.slice(0, 30));
    const images = code.flatMap((entry) =>
      entry.outputs.filter((output) => output.output_type === 'display_data' && 'image/png' in output.data),
    );
    expect(images.length).toBeGreaterThan(0);
  });

  it("holds each sub-analysis's answer once, after its cells, not also as its answer step", () => {
    const markdown = notebook.cells
      .filter((cell) => cell.cell_type === 'markdown')
      .map((cell) => text(cell.source));
    const answered = record.subAnalyses.filter((sub) => sub.answer !== null);
    expect(answered.length).toBeGreaterThan(0);
    for (const sub of answered) {
      const holding = markdown.filter(
        (source) => /^\*\*Answer( of|\*\* \()/.test(source) && source.includes(`${sub.id}`),
      );
      expect(
        holding.map((source) => source.split('\n')[0]),
        sub.id,
      ).toEqual([`**Answer of ${sub.id}**`]);
    }
  });

  it('copies deep.json as the json form when the report goes to another folder', async () => {
    const out = join(root, 'elsewhere');
    const rendered = await renderDeepRunFolder(join(root, 'plain'), {
      outDir: out,
      formats: ['json', 'ipynb'],
    });
    expect(rendered.files.sort()).toEqual([join(out, 'analysis.ipynb'), join(out, 'deep.json')]);
    expect(await readFile(join(out, 'deep.json'), 'utf8')).toBe(
      await readFile(join(root, 'plain', 'deep.json'), 'utf8'),
    );
    await expect(stat(join(out, 'report.html'))).rejects.toThrow();
  });

  it('keeps hostile claims, sections and questions inert', async () => {
    await buildRecordedDeepRun(join(root, 'hostile'), hostile);
    await renderDeepRunFolder(join(root, 'hostile'), { formats: ['ipynb'] });
    const document = await readFile(join(root, 'hostile', 'analysis.ipynb'), 'utf8');
    const parsed = notebookSchema.parse(JSON.parse(document) as unknown);
    const markdown = parsed.cells
      .filter((cell) => cell.cell_type === 'markdown')
      .map((cell) => text(cell.source))
      .join('\n');
    expect(markdown).not.toMatch(/<script>|<img |<svg |\]\(javascript:/i);
    expect(markdown).toContain('window.__xss');
  });
});
