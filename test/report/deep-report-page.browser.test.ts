import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderDeepRunFolder } from '../../src/report/index.ts';
import { hostile } from '../deep/support/hostile-deep-record.ts';
import { buildRecordedDeepRun } from '../deep/support/recorded-deep-run.ts';

// Debian's Chromium opens the deep report from disk, as a person would.
const artifactsDir = resolve(import.meta.dirname, '../../test-artifacts');
let root = '';
let browser: Browser;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'datalyst-deep-browser-'));
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
  problems: string[];
  requests: string[];
}

async function openReport(outDir: string): Promise<PageWatch> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const watch: PageWatch = { page, problems: [], requests: [] };
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') watch.problems.push(message.text());
  });
  page.on('pageerror', (error) => watch.problems.push(error.message));
  page.on('request', (request) => watch.requests.push(request.url()));
  page.on('dialog', (dialog) => {
    watch.problems.push(`dialog: ${dialog.message()}`);
    void dialog.dismiss();
  });
  await page.goto(pathToFileURL(join(outDir, 'report.html')).href, { waitUntil: 'load' });
  return watch;
}

function expectQuiet(watch: PageWatch): void {
  expect(watch.problems).toEqual([]);
  expect(watch.requests.filter((url) => !url.startsWith('file:') && !url.startsWith('data:'))).toEqual([]);
}

describe('the deep report in Chromium', () => {
  it('renders the sections with their figures drawn, and a citation leads to its evidence and output', async () => {
    const outDir = join(root, 'plain');
    const record = await buildRecordedDeepRun(outDir);
    await renderDeepRunFolder(outDir, { formats: ['html'] });
    const watch = await openReport(outDir);
    try {
      expectQuiet(watch);
      const page = await watch.page.evaluate(() => ({
        sections: Array.from(document.querySelectorAll('#report section.deep-section h2')).map(
          (h) => h.textContent,
        ),
        chartMarks: document.querySelectorAll('#report figure.chart svg path, #report figure.chart svg line')
          .length,
        figureHeights: Array.from(document.querySelectorAll('#report figure.figure img')).map(
          (image) => image.getBoundingClientRect().height,
        ),
        verified: document.querySelectorAll('#report a.num-verified').length,
        unverified: document.querySelectorAll('#report .num-unverified').length,
        brokenLinks: Array.from(document.querySelectorAll('a[href^="#"]'))
          .map((link) => link.getAttribute('href') ?? '')
          .filter((href) => document.getElementById(decodeURIComponent(href.slice(1))) === null),
      }));
      expect(page.sections).toEqual(record.sections.map((section) => section.title));
      expect(page.chartMarks).toBeGreaterThan(5);
      expect(page.figureHeights.length).toBeGreaterThan(3);
      expect(page.figureHeights.every((height) => height > 100)).toBe(true);
      expect(page.verified).toBeGreaterThan(20);
      expect(page.unverified).toBe(0);
      expect(page.brokenLinks).toEqual([]);
      await watch.page.screenshot({ path: join(artifactsDir, 'deep-report-first-screen.png') });
      // The contents bar: its links apart from each other (they once ran together), and on screen after a scroll.
      const gaps = await watch.page.$$eval('nav.toc a', (links) =>
        links.slice(1).map((link, index) => {
          const previous = links[index] as Element;
          return link.getBoundingClientRect().left - previous.getBoundingClientRect().right;
        }),
      );
      expect(gaps.length).toBe(5);
      expect(Math.min(...gaps)).toBeGreaterThan(8);
      await watch.page.evaluate(() => window.scrollTo(0, document.body.scrollHeight / 2));
      expect((await watch.page.locator('nav.toc').boundingBox())?.y).toBe(0);
      await watch.page.evaluate(() => window.scrollTo(0, 0));

      // Follow a citation to its evidence, then the evidence to the cell output that printed it.
      await watch.page.click('#report a[href="#evidence-EV8"]');
      expect(await watch.page.evaluate(() => window.location.hash)).toBe('#evidence-EV8');
      const output = record.evidence.find((item) => item.id === 'EV8')?.outputs[0] ?? '';
      await watch.page.click(`#evidence-EV8 a[href="#output-${output.replace(':', '_')}"]`);
      const opened = await watch.page.evaluate(
        (id) => {
          const target = document.getElementById(id);
          const box = target?.getBoundingClientRect();
          return { open: target?.closest('details')?.open ?? false, visible: (box?.height ?? 0) > 0 };
        },
        `output-${output.replace(':', '_')}`,
      );
      // Chromium opens a closed <details> when the fragment navigated to is inside it.
      expect(opened).toEqual({ open: true, visible: true });
      expectQuiet(watch);
    } finally {
      await watch.page.close();
    }
  });

  it('leaves every XSS payload in claims, sections, sub-questions and table names inert', async () => {
    const outDir = join(root, 'hostile');
    await buildRecordedDeepRun(outDir, hostile);
    await renderDeepRunFolder(outDir, { formats: ['html'] });
    const watch = await openReport(outDir);
    try {
      await watch.page.evaluate(() => {
        document.querySelectorAll('details').forEach((details) => {
          details.open = true;
        });
      });
      await watch.page.waitForTimeout(200);
      expect(
        await watch.page.evaluate(() => (window as unknown as { __xss?: string }).__xss),
      ).toBeUndefined();
      expect(await watch.page.locator('text=<script>window.__xss').count()).toBeGreaterThan(0);
      expectQuiet(watch);
    } finally {
      await watch.page.close();
    }
  });
});

describe('the deep report on a phone', () => {
  it('does not scroll sideways at 390 px when tables have long names (file#table of a mixed workspace)', async () => {
    const outDir = join(root, 'long-names');
    const longName = 'student_loan.sqlite#longest_absense_from_school';
    await buildRecordedDeepRun(outDir, (record) => ({
      ...record,
      brief:
        record.brief === null
          ? null
          : {
              ...record.brief,
              questions: record.brief.questions.map((entry) => ({
                ...entry,
                tables: [longName, 'student_loan.xlsx#enrolled_students_by_school', ...entry.tables],
              })),
            },
      subAnalyses: record.subAnalyses.map((sub) => ({
        ...sub,
        question: `What do the values of ${longName} say?`,
        tables: [longName, ...sub.tables],
      })),
      evidence: record.evidence.map((item) => ({
        ...item,
        claim: `\`${longName}\`: ${item.claim}`,
      })),
    }));
    await renderDeepRunFolder(outDir, { formats: ['html'] });
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    try {
      await page.goto(pathToFileURL(join(outDir, 'report.html')).href, { waitUntil: 'load' });
      // Closed <details> hide their overflow: open them all, as a reader might.
      await page.evaluate(() => {
        document.querySelectorAll('details').forEach((details) => (details.open = true));
      });
      const widths = await page.evaluate(() => ({
        page: document.documentElement.scrollWidth,
        widest: Array.from(document.querySelectorAll('main *'))
          .filter((element) => element.getBoundingClientRect().right > 390)
          .slice(0, 5)
          .map((element) => `${element.tagName.toLowerCase()}.${element.className}`),
      }));
      expect(widths.page, widths.widest.join(', ')).toBeLessThanOrEqual(390);
    } finally {
      await page.close();
    }
  });
});
