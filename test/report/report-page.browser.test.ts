import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTrace } from '../../src/trace/reader.ts';
import { renderReport } from '../../src/report/index.ts';
import { makeHostileTrace } from '../fixtures/traces/hostile-trace.ts';
import { makeSyntheticTrace } from '../fixtures/traces/synthetic-trace.ts';

// Debian's Chromium opens the reports from disk, as a person would.
const artifactsDir = resolve(import.meta.dirname, '../../test-artifacts');
let root = '';
let browser: Browser;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'datalyst-browser-'));
  await mkdir(artifactsDir, { recursive: true });
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
});
afterAll(async () => {
  await browser?.close();
  await rm(root, { recursive: true, force: true });
});

interface PageWatch {
  page: Page;
  consoleErrors: string[];
  pageErrors: string[];
  requests: string[];
  dialogs: string[];
}

async function openReport(outDir: string): Promise<PageWatch> {
  const page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
  const watch: PageWatch = { page, consoleErrors: [], pageErrors: [], requests: [], dialogs: [] };
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') watch.consoleErrors.push(message.text());
  });
  page.on('pageerror', (error) => watch.pageErrors.push(error.message));
  page.on('request', (request) => watch.requests.push(request.url()));
  page.on('dialog', (dialog) => {
    watch.dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  await page.goto(pathToFileURL(join(outDir, 'report.html')).href, { waitUntil: 'load' });
  return watch;
}

function expectQuiet(watch: PageWatch): void {
  expect(watch.consoleErrors).toEqual([]);
  expect(watch.pageErrors).toEqual([]);
  expect(watch.dialogs).toEqual([]);
  expect(watch.requests.filter((url) => !url.startsWith('file:') && !url.startsWith('data:'))).toEqual([]);
}

describe('report.html in Chromium', () => {
  it('opens offline with every chart and figure drawn, and a readable first screen', async () => {
    const outDir = join(root, 'synthetic');
    const trace = makeSyntheticTrace({ rounds: 8, charts: 3, figures: 2 });
    await renderReport(trace, { outDir, formats: ['html'] });
    const watch = await openReport(outDir);
    try {
      expectQuiet(watch);
      const charts = trace.records.reduce(
        (total, record) => total + (record.type === 'execution' ? record.result.charts.length : 0),
        0,
      );
      const figures = trace.records.reduce(
        (total, record) => total + (record.type === 'execution' ? record.result.figures.length : 0),
        0,
      );
      // The process is folded: open every round, as a reader would, before measuring what it shows.
      await watch.page.evaluate(() => {
        for (const details of Array.from(document.querySelectorAll('#process details')))
          details.setAttribute('open', '');
      });
      const counts = await watch.page.evaluate(() => ({
        gallerySvgs: document.querySelectorAll('#figures figure.chart > svg, .key-visuals figure.chart > svg')
          .length,
        galleryFigures: document.querySelectorAll(
          '#figures figure.figure image, .key-visuals figure.figure image',
        ).length,
        processReuses: document.querySelectorAll('#process svg.reuse use').length,
        drawnMarks: document.querySelectorAll(
          ':is(#figures, .key-visuals) figure.chart svg path, :is(#figures, .key-visuals) figure.chart svg line',
        ).length,
        // A drawn image has a box; a blocked or broken one would not be laid out with its size.
        figureBoxes: Array.from(
          document.querySelectorAll(':is(#figures, .key-visuals) figure.figure svg'),
        ).map((svg) => svg.getBoundingClientRect().height),
        reuseBoxes: Array.from(document.querySelectorAll('#process svg.reuse')).map(
          (svg) => svg.getBoundingClientRect().height,
        ),
        verifiedLinks: Array.from(document.querySelectorAll('#answer a.num-verified')).map((link) =>
          link.getAttribute('href'),
        ),
        targetsExist: Array.from(document.querySelectorAll('#answer a.num-verified')).every(
          (link) => document.querySelector(link.getAttribute('href') ?? '#none') !== null,
        ),
      }));
      expect(counts.gallerySvgs).toBe(charts);
      expect(counts.galleryFigures).toBe(figures);
      expect(counts.processReuses).toBe(charts + figures);
      expect(counts.drawnMarks).toBeGreaterThan(charts * 50);
      expect(counts.figureBoxes.every((height) => height > 100)).toBe(true);
      expect(counts.reuseBoxes.every((height) => height > 100)).toBe(true);
      // The growth (a percentage) is printed as a ratio that rounds to it by E1 and E5 alike, in the same words:
      // of equal matches the grounding links the latest output (src/report/README.md).
      expect(counts.verifiedLinks).toEqual(['#output-E1', '#output-E1', '#output-E5']);
      expect(counts.targetsExist).toBe(true);
      await watch.page.screenshot({ path: join(artifactsDir, 'report-first-screen.png') });
    } finally {
      await watch.page.close();
    }
  });

  it('shows when the run started as a person reads it, in UTC, with the exact time kept in <time datetime> (it showed 2025-03-01T09:00:00.000Z)', async () => {
    const outDir = join(root, 'times');
    await renderReport(makeSyntheticTrace({ rounds: 1, charts: 0, figures: 0 }), {
      outDir,
      formats: ['html'],
      now: new Date('2025-03-02T00:00:00Z'),
    });
    const watch = await openReport(outDir);
    try {
      expectQuiet(watch);
      const shown = await watch.page.evaluate(() => {
        const time = (selector: string) => {
          const element = document.querySelector<HTMLTimeElement>(selector);
          return element === null ? null : { text: element.innerText, datetime: element.dateTime };
        };
        return {
          subtitle: document.querySelector<HTMLElement>('header .subtitle')?.innerText ?? '',
          headerTime: time('header .subtitle time'),
          footerTime: time('footer time'),
        };
      });
      expect(shown.subtitle).toContain('started 1 March 2025, 09:00 UTC');
      expect(shown.subtitle).not.toMatch(/\d{4}-\d\d-\d\dT/);
      expect(shown.headerTime).toEqual({
        text: '1 March 2025, 09:00 UTC',
        datetime: '2025-03-01T09:00:00.000Z',
      });
      expect(shown.footerTime).toEqual({
        text: '2 March 2025, 00:00 UTC',
        datetime: '2025-03-02T00:00:00.000Z',
      });
    } finally {
      await watch.page.close();
    }
  });

  it('leaves every XSS payload inert', async () => {
    const outDir = join(root, 'hostile');
    await renderReport(makeHostileTrace(), { outDir, formats: ['html'] });
    const watch = await openReport(outDir);
    try {
      await watch.page.screenshot({ path: join(artifactsDir, 'report-hostile-first-screen.png') });
      // Click every link that is not a plain in-page anchor or http(s): none may run code.
      await watch.page.evaluate(() => {
        for (const link of Array.from(document.querySelectorAll('a'))) {
          const href = link.getAttribute('href') ?? link.getAttribute('xlink:href') ?? '';
          if (!/^https?:/.test(href))
            link.dispatchEvent(new MouseEvent('click', { bubbles: true, cancelable: true }));
        }
      });
      await watch.page.mouse.move(400, 400);
      expectQuiet(watch);
      const state = await watch.page.evaluate(() => ({
        flag: (window as unknown as { __xss?: unknown }).__xss ?? null,
        scripts: document.scripts.length,
        iframes: document.querySelectorAll('iframe').length,
        chartErrors: document.querySelectorAll(':is(#figures, .key-visuals) .chart-error').length,
        charts: document.querySelectorAll(':is(#figures, .key-visuals) figure.chart > svg').length,
        ansiFree: !document.body.innerText.includes('\u001b'),
      }));
      expect(state).toEqual({
        flag: null,
        scripts: 0,
        iframes: 0,
        // The spec that does not compile and the one that loads remote data are error boxes.
        chartErrors: 2,
        charts: 1,
        ansiFree: true,
      });
    } finally {
      await watch.page.close();
    }
  });

  it("renders DeepAnalyze's real student-loan run with its ungrounded answer flagged", async () => {
    const outDir = join(root, 'student-loan');
    const trace = await readTrace(
      resolve(import.meta.dirname, '../fixtures/traces/student-loan/trace.jsonl'),
    );
    const rendered = await renderReport(trace, { outDir, formats: ['html'] });
    const watch = await openReport(outDir);
    try {
      expectQuiet(watch);
      const marks = await watch.page.evaluate(() => ({
        verified: document.querySelectorAll('#answer .num-verified').length,
        unverified: document.querySelectorAll('#answer .num-unverified').length,
        outputs: document.querySelectorAll('.output-id').length,
      }));
      expect(marks).toEqual({
        verified: rendered.grounding.verified,
        unverified: rendered.grounding.unverified,
        outputs: 7,
      });
      await watch.page.screenshot({ path: join(artifactsDir, 'report-student-loan-first-screen.png') });
      await watch.page
        .locator('#answer')
        .screenshot({ path: join(artifactsDir, 'report-student-loan-answer.png') });
      await watch.page.emulateMedia({ media: 'print' });
      await watch.page.pdf({ path: join(artifactsDir, 'report-student-loan.pdf') });
    } finally {
      await watch.page.close();
    }
  });
});
