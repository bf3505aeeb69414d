import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeepRecord } from '../../src/deep/index.ts';
import { renderDeepRunFolder } from '../../src/report/index.ts';
import { buildRecordedDeepRun } from '../deep/support/recorded-deep-run.ts';

// The offline deep run of workspace-examples/student-loan (its recorded sub-runs), printed by
// Debian's Chromium through pdf.ts; poppler's pdftotext, pdfinfo and pdfimages read the PDF back.
let root = '';
let runDir = '';
let record: DeepRecord;
let pdfPath = '';
let pages: string[] = [];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'datalyst-deep-pdf-'));
  runDir = join(root, 'deep');
  record = await buildRecordedDeepRun(runDir);
  const rendered = await renderDeepRunFolder(runDir, { formats: ['pdf'] });
  pdfPath = join(runDir, 'report.pdf');
  expect(rendered.files).toEqual([pdfPath]);
  const { stdout } = await execa('pdftotext', [pdfPath, '-']);
  pages = stdout.split('\f').slice(0, -1);
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Each page's lines, trimmed, without empty ones. */
function linesOf(page: string): string[] {
  return page
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
}

/** The pages (0-based) and lines between two headings, which stand alone on their lines. */
function linesBetween(from: string, to: string): Array<{ page: number; line: string }> {
  const all = pages.flatMap((page, index) => linesOf(page).map((line) => ({ page: index, line })));
  const start = all.findIndex((entry) => entry.line === from);
  const end = all.findIndex((entry, index) => index > start && entry.line === to);
  expect(start).toBeGreaterThanOrEqual(0);
  expect(end).toBeGreaterThan(start);
  return all.slice(start + 1, end);
}

describe('the deep report printed to PDF', () => {
  it('is a PDF of several pages, written alone when pdf alone is asked for', async () => {
    expect((await readFile(pdfPath)).subarray(0, 5).toString()).toBe('%PDF-');
    const { stdout: info } = await execa('pdfinfo', [pdfPath]);
    const pageCount = Number(/Pages:\s+(\d+)/.exec(info)?.[1]);
    expect(pageCount).toBeGreaterThan(10);
    expect(pages.length).toBe(pageCount);
    // report.html was rendered to print it, not written; deep.json and sub/ are as they were.
    expect((await readdir(runDir)).sort()).toEqual(['deep.json', 'report.pdf', 'sub']);
  });

  it('holds the question, the brief, every section, every evidence id, every sub-analysis and the provenance', () => {
    const text = pages.join('\n');
    expect(text).toContain('Generate a data science report.');
    expect(text).toContain('Brief');
    expect(record.sections.length).toBeGreaterThan(3);
    for (const section of record.sections) expect(linesOf(text)).toContain(section.title);
    expect(record.evidence.length).toBeGreaterThan(20);
    const evidenceIds = new Set(
      linesBetween('Evidence', 'Sub-analyses').flatMap(({ line }) => /^(EV\d+) /.exec(line)?.[1] ?? []),
    );
    expect([...evidenceIds].sort()).toEqual(record.evidence.map((item) => item.id).sort());
    for (const sub of record.subAnalyses) expect(text).toContain(`sub/${sub.id}`);
    expect(linesOf(text)).toContain('Provenance');
    expect(text).toContain('recorded-student-loan');
  });

  it('splits no evidence item across pages', () => {
    // An item is its id and claim, then "From S1, printed by …": both on one page, and every page
    // of the evidence starts at an item (or the section's note), not in the middle of one.
    const byPage = new Map<number, string[]>();
    for (const { page, line } of linesBetween('Evidence', 'Sub-analyses'))
      byPage.set(page, [...(byPage.get(page) ?? []), line]);
    let items = 0;
    for (const [page, lines] of byPage) {
      const starts = lines.filter((line) => /^EV\d+ /.test(line)).length;
      const ends = lines.filter((line) => /^From S\d+, printed by /.test(line)).length;
      expect({ page, starts }).toEqual({ page, starts: ends });
      const first = lines.findIndex((line) => /^EV\d+ |^From S\d+, printed by /.test(line));
      expect(lines[first], `page ${page + 1}`).toMatch(/^EV\d+ /);
      items += starts;
    }
    expect(items).toBe(record.evidence.length);
    expect(byPage.size).toBeGreaterThan(1);
  });

  it('keeps each sub-analysis head on one page, prints its outputs and leaves out its code', () => {
    for (const sub of record.subAnalyses) {
      // The head's id stands on a line of its own, its question on the next.
      const firstWords = sub.question.split(' ').slice(0, 4).join(' ');
      const headPage = pages.findIndex((page) =>
        linesOf(page).some(
          (line, index, lines) => line === sub.id && (lines[index + 1] ?? '').startsWith(firstWords),
        ),
      );
      expect(headPage, sub.id).toBeGreaterThanOrEqual(0);
      // The last fact of the head.
      expect(pages[headPage]).toContain(sub.evidenceIds.join(' '));
    }
    const text = pages.join('\n');
    expect(text).toContain('Each cell below shows what it printed, not its code');
    expect(text).toMatch(/Round 4 → S1:E4: ok/);
    expect(text).toContain('Tidy helpers ready');
    expect(text).not.toContain('def count_of(count, noun):');
  });

  it('prints each figure on the page of its caption, and ends no page on a heading', async () => {
    const { stdout } = await execa('pdfimages', ['-list', pdfPath]);
    const imagesPerPage = new Map<number, number>();
    for (const row of stdout.split('\n').slice(2)) {
      const [page, , type] = row.trim().split(/\s+/);
      if (type === 'image') imagesPerPage.set(Number(page), (imagesPerPage.get(Number(page)) ?? 0) + 1);
    }
    const captionsPerPage = new Map<number, number>();
    pages.forEach((page, index) => {
      const captions = page.match(/Figure \d+ of S\d+:E\d+, printed by/g)?.length ?? 0;
      if (captions > 0) captionsPerPage.set(index + 1, captions);
    });
    expect(captionsPerPage.size).toBeGreaterThan(5);
    expect(imagesPerPage).toEqual(captionsPerPage);
    const headings = [
      'Brief',
      'Evidence',
      'Sub-analyses',
      'Provenance',
      'Its answer',
      ...record.sections.map((section) => section.title),
    ];
    for (const [index, page] of pages.entries()) {
      const lastLine = linesOf(page).at(-1) ?? '';
      expect(headings, `page ${index + 1}`).not.toContain(lastLine);
      expect(lastLine, `page ${index + 1}`).not.toMatch(/^Its \d+ cells?$|^Round \d+ → S\d+:E\d+/);
    }
  });
});
