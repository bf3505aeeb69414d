import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatalystError } from '../../src/errors/index.ts';
import { renderReport } from '../../src/report/index.ts';
import { makeSyntheticTrace, withSavedImage } from '../fixtures/traces/synthetic-trace.ts';
import { runDatalyst } from '../cli/support/cli-harness.ts';
import { pointSpec } from '../support/chart-specs.ts';

// Debian's Chromium prints the report; poppler's pdftotext and pdfinfo read the PDF back.
let root = '';
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'datalyst-pdf-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** The text of each page (pdftotext separates pages with a form feed). */
async function pageTexts(pdfPath: string): Promise<string[]> {
  const { stdout } = await execa('pdftotext', ['-layout', pdfPath, '-']);
  return stdout.split('\f').filter((page) => page.trim() !== '');
}

describe('report.pdf printed by Chromium', () => {
  it('has pages, holds the answer, and splits no figure and no heading from its content', async () => {
    const outDir = join(root, 'answered');
    const trace = makeSyntheticTrace({ rounds: 8, charts: 3, figures: 2 });
    const rendered = await renderReport(trace, { outDir, formats: ['md', 'pdf'] });
    const pdfPath = join(outDir, 'report.pdf');
    expect(rendered.files).toContain(pdfPath);
    // pdf alone does not write report.html.
    await expect(stat(join(outDir, 'report.html'))).rejects.toThrow();
    expect((await readFile(pdfPath)).subarray(0, 5).toString()).toBe('%PDF-');
    const { stdout: info } = await execa('pdfinfo', [pdfPath]);
    expect(Number(/Pages:\s+(\d+)/.exec(info)?.[1])).toBeGreaterThan(1);

    const pages = await pageTexts(pdfPath);
    const text = pages.join('\n');
    expect(text).toContain('Which regions grow fastest');
    expect(text).toMatch(/The mean order value in the first pass was 702\.76/);
    expect(text).toContain('Provenance');
    // Paper cannot be unfolded: the process prints open, code included.
    const firstCode = trace.records.find((record) => record.type === 'execution');
    const codeLine = firstCode?.type === 'execution' ? (firstCode.code.split('\n')[0] ?? '') : '';
    expect(codeLine.length).toBeGreaterThan(5);
    expect(text).toContain(codeLine.trim());
    expect(text).toMatch(/E1 ok/);
    // Each chart's title and its caption are on the same page: the figure was not split.
    const charts = [...text.matchAll(/Order value by day \(round (\d+)\)/g)].map((match) => match[1]);
    expect(charts.length).toBeGreaterThanOrEqual(3);
    for (const page of pages)
      for (const [, round] of page.matchAll(/Order value by day \(round (\d+)\)/g))
        expect(page).toMatch(new RegExp(`Chart 1 of output E${round}\\b`));
    // No page ends on a section heading: what follows it is on the same page.
    for (const page of pages) {
      const lastLine = page.trim().split('\n').at(-1)?.trim() ?? '';
      expect(['Answer', 'Figures and tables', 'Data', 'Process', 'Provenance', 'Input files']).not.toContain(
        lastLine,
      );
    }
  });

  it('says how to get Chromium when it is missing, and still writes the other formats', async () => {
    const outDir = join(root, 'no-chromium');
    const trace = makeSyntheticTrace({ rounds: 2, charts: 0, figures: 0 });
    const failure = await renderReport(trace, {
      outDir,
      formats: ['html', 'pdf'],
      chromiumPath: join(root, 'no-such-chromium'),
    }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(DatalystError.isInstance(failure)).toBe(true);
    expect((failure as DatalystError).code).toBe('CHROMIUM_UNAVAILABLE');
    expect((failure as DatalystError).fix).toContain('apt-get install chromium');
    expect((await stat(join(outDir, 'report.html'))).size).toBeGreaterThan(0);
    await expect(stat(join(outDir, 'report.pdf'))).rejects.toThrow();
  });

  it('prints a chart of `datalyst chart` to a one-page PDF of the chart’s size', async () => {
    const specPath = join(root, 'points.vl.json');
    await writeFile(specPath, JSON.stringify(pointSpec(50, 'Fifty points')));
    const run = await runDatalyst(['chart', specPath, '-o', join(root, 'points.pdf')]);
    expect(run.stderr).toBe('');
    expect(run.exitCode).toBe(0);
    const { stdout: info } = await execa('pdfinfo', [join(root, 'points.pdf')]);
    expect(info).toMatch(/Pages:\s+1\n/);
    // vega-lite's default 200 × 200 plot plus axes and title: a small page, not A4 (595 × 842 pt).
    const [, width, height] = /Page size:\s+([\d.]+) x ([\d.]+) pts/.exec(info) ?? [];
    expect(Number(width)).toBeLessThan(300);
    expect(Number(height)).toBeLessThan(300);
    expect((await pageTexts(join(root, 'points.pdf'))).join('')).toContain('Fifty points');
  });

  // The images a cell saved as files (plt.savefig) were read only for html and md: report.pdf alone (as
  // `datalyst serve` prints it, ?format=pdf) printed the HTML without them.
  it('holds the images the cells saved as files when it is printed alone', async () => {
    const trace = makeSyntheticTrace({ rounds: 2, charts: 0, figures: 1 });
    const { records, png } = withSavedImage(trace);
    const imagesIn = async (formats: Array<'html' | 'pdf'>): Promise<number> => {
      const outDir = join(root, `saved-image-${formats.join('-')}`);
      await mkdir(join(outDir, 'artifacts', 'plots'), { recursive: true });
      await writeFile(join(outDir, 'artifacts', 'plots', 'revenue.png'), png);
      await renderReport({ ...trace, records }, { outDir, formats });
      const { stdout } = await execa('pdfimages', ['-list', join(outDir, 'report.pdf')]);
      return stdout.split('\n').filter((row) => row.trim().split(/\s+/)[2] === 'image').length;
    };
    const withHtml = await imagesIn(['html', 'pdf']);
    // The figure and the saved image.
    expect(withHtml).toBeGreaterThanOrEqual(2);
    expect(await imagesIn(['pdf'])).toBe(withHtml);
  });
});
