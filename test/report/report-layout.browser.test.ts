import { copyFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyze } from '../../src/agent/analyze.ts';
import { createOfflineAnalyst } from '../../src/agent/offline-analyst/index.ts';
import { renderReport, renderRunFolder } from '../../src/report/index.ts';
import type { TraceDocument } from '../../src/trace/schema.ts';
import { makeSyntheticTrace } from '../fixtures/traces/synthetic-trace.ts';

/**
 * The report as a person reads it, in Chromium: the demo (the offline analyst
 * on the sales example) with its process folded is at most a third of its
 * old height (33,536 px at 1280 px wide), the first screen holds the
 * question, the answer and key charts, any figure opens large without script,
 * and runs that failed, were cancelled or read no data look different from
 * answered ones from the title down. Screenshots go to test-artifacts/, and
 * to docs/ with DATALYST_DOCS_SCREENSHOTS=1.
 */

const repoRoot = resolve(import.meta.dirname, '../..');
const artifactsDir = join(repoRoot, 'test-artifacts');
const docsDir = join(repoRoot, 'docs');
const OLD_DEMO_HEIGHT = 33_536;
let root = '';
let browser: Browser;
let demoDir = '';

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'datalyst-layout-'));
  await mkdir(artifactsDir, { recursive: true });
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  const workspaceDir = join(repoRoot, 'workspace-examples', 'sales');
  demoDir = join(root, 'demo');
  await analyze({
    instruction: (await readFile(join(workspaceDir, 'instruction.txt'), 'utf8')).trim(),
    workspaceDir,
    model: createOfflineAnalyst(),
    outDir: demoDir,
  });
  await renderRunFolder(demoDir);
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await rm(root, { recursive: true, force: true });
});

async function open(outDir: string, width: number): Promise<Page> {
  const page = await browser.newPage({ viewport: { width, height: width >= 1000 ? 900 : 844 } });
  await page.goto(pathToFileURL(join(outDir, 'report.html')).href, { waitUntil: 'load' });
  return page;
}

async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(artifactsDir, name) });
  if (process.env.DATALYST_DOCS_SCREENSHOTS === '1')
    await copyFile(join(artifactsDir, name), join(docsDir, name));
}

/** A synthetic run that ended as `reason` says, without an answer. */
function endedTrace(reason: 'max-rounds' | 'cancelled' | 'no-data'): TraceDocument {
  const trace = makeSyntheticTrace({
    outcome: reason === 'cancelled' ? 'cancelled' : 'max-rounds',
    rounds: 3,
    charts: 1,
    figures: 1,
  });
  if (reason !== 'no-data') return trace;
  const start = trace.records[0];
  const end = trace.records.at(-1);
  if (start?.type !== 'run-start' || end?.type !== 'run-end') throw new Error('unexpected synthetic trace');
  return {
    ...trace,
    records: [
      start,
      {
        type: 'workspace-profile',
        at: start.startedAt,
        profile: {
          truncated: false,
          files: [
            {
              path: 'notes.pdf',
              sizeBytes: 1200,
              format: 'unsupported',
              tables: [],
              error: 'not a data file',
              notes: [],
            },
          ],
        },
      },
      {
        ...end,
        rounds: 0,
        termination: { reason: 'no-data', detail: 'notes.pdf holds no table' },
        answer: null,
      },
    ],
  };
}

describe('the demo report in Chromium', () => {
  it('is at most a third of its old height at 1280 px with the process folded', async () => {
    const page = await open(demoDir, 1280);
    try {
      const layout = await page.evaluate(() => ({
        height: document.documentElement.scrollHeight,
        openRounds: document.querySelectorAll('#process details.round[open]').length,
        rounds: document.querySelectorAll('#process details.round').length,
        openCode: document.querySelectorAll('#process details.code[open]').length,
      }));
      expect(layout.rounds).toBeGreaterThanOrEqual(10);
      expect(layout.openRounds).toBe(0);
      expect(layout.openCode).toBe(0);
      expect(layout.height).toBeLessThanOrEqual(Math.floor(OLD_DEMO_HEIGHT / 3));
      await screenshot(page, 'report-screenshot.png');
      await page.screenshot({ path: join(artifactsDir, 'report-demo-full-1280.png'), fullPage: true });
    } finally {
      await page.close();
    }
  });

  it('shows the question, the answer and a key chart on the first screen, with a sticky table of contents', async () => {
    const page = await open(demoDir, 1280);
    try {
      const top = await page.evaluate(() => {
        const box = (selector: string): number =>
          document.querySelector(selector)?.getBoundingClientRect().top ?? 1e9;
        return { h1: box('h1'), answer: box('#answer .answer'), keyChart: box('.key-visuals figure') };
      });
      expect(top.h1).toBeLessThan(200);
      expect(top.answer).toBeLessThan(900);
      expect(top.keyChart).toBeLessThan(900);
      await page.evaluate(() => window.scrollTo(0, 5000));
      const toc = await page.evaluate(() => document.querySelector('nav.toc')?.getBoundingClientRect().top);
      expect(toc).toBe(0);
    } finally {
      await page.close();
    }
    const phone = await open(demoDir, 390);
    try {
      const overflow = await phone.evaluate(() => document.documentElement.scrollWidth);
      expect(overflow).toBeLessThanOrEqual(390);
      // Every link of the contents bar is on the screen (it was cut off at "Prove…", scrollable with no sign of it).
      const links = await phone.$$eval('nav.toc a', (anchors) =>
        anchors.map((anchor) => {
          const box = anchor.getBoundingClientRect();
          const bar = anchor.closest('.toc-inner');
          return {
            text: anchor.textContent ?? '',
            left: box.left,
            right: box.right,
            hidden: bar === null ? 0 : bar.scrollWidth - bar.clientWidth,
          };
        }),
      );
      expect(links.map((link) => link.text)).toContain('Provenance');
      for (const link of links) {
        expect(link.left, link.text).toBeGreaterThanOrEqual(0);
        expect(link.right, link.text).toBeLessThanOrEqual(390);
        expect(link.hidden, link.text).toBe(0);
      }
      await screenshot(phone, 'report-screenshot-390.png');
    } finally {
      await phone.close();
    }
  });

  it('opens any figure large with CSS alone, and a link to an output opens its round', async () => {
    const page = await open(demoDir, 1280);
    try {
      // The "Enlarge" label covers no part of any figure or chart (a chart's title is at its top).
      const overlaps = await page.$$eval(
        'figure:has(> a.zoom)',
        (figures) =>
          figures.filter((figure) => {
            const label = figure.querySelector('a.zoom span')?.getBoundingClientRect();
            const drawing = figure.querySelector('svg')?.getBoundingClientRect();
            return label === undefined || drawing === undefined || label.bottom > drawing.top;
          }).length,
      );
      expect(overlaps).toBe(0);
      expect(await page.locator('figure:has(> a.zoom)').count()).toBeGreaterThan(5);
      const figure = page.locator('#figures figure.figure').first();
      const small = await figure.locator('svg').first().boundingBox();
      await figure.locator('a.zoom').click();
      const lightbox = page.locator('.lightbox:target');
      await expect.poll(() => lightbox.count()).toBe(1);
      const large = await lightbox.locator('svg').boundingBox();
      expect(large?.width ?? 0).toBeGreaterThan((small?.width ?? 0) * 1.05);
      expect(large?.width ?? 0).toBeGreaterThan(1000);
      await page.screenshot({ path: join(artifactsDir, 'report-figure-enlarged.png') });
      await lightbox.locator('a.lightbox-close').click();
      await expect.poll(() => page.locator('.lightbox:target').count()).toBe(0);

      const link = page.locator('#answer a.num-verified').first();
      const target = (await link.getAttribute('href')) ?? '';
      await link.click();
      const opened = await page.evaluate(
        (id) => document.getElementById(id.slice(1))?.closest('details.round')?.hasAttribute('open') ?? false,
        target,
      );
      expect(opened).toBe(true);
    } finally {
      await page.close();
    }
  });
});

describe('an enlarged chart or figure', () => {
  // "Enlarge" kept a 420 px vega chart at 420 px in the middle of a 1280 px screen (and of a phone
  // held sideways): the overlay's SVG kept its own size.
  it.each([
    { kind: 'chart', width: 1280 },
    { kind: 'figure', width: 1280 },
    { kind: 'chart', width: 390 },
    { kind: 'figure', width: 390 },
    { kind: 'chart', width: 844, height: 390 },
  ] as const)('a $kind fills the screen at $width px, at its own aspect ratio', async (size) => {
    const { kind, width } = size;
    const page = await open(demoDir, width);
    try {
      if ('height' in size) await page.setViewportSize({ width, height: size.height });
      const figure = page.locator(`figure.${kind}:has(> a.zoom)`).first();
      await figure.locator('a.zoom').click();
      const lightbox = page.locator('.lightbox:target');
      await expect.poll(() => lightbox.count()).toBe(1);
      const shown = await lightbox.evaluate((overlay) => {
        const svg = overlay.querySelector('svg');
        const box = svg?.getBoundingClientRect();
        const style = getComputedStyle(overlay);
        const [, , viewWidth = 0, viewHeight = 1] = (svg?.getAttribute('viewBox') ?? '')
          .split(' ')
          .map(Number);
        return {
          width: box?.width ?? 0,
          height: box?.height ?? 0,
          left: box?.left ?? -1,
          right: box?.right ?? 1e9,
          top: box?.top ?? -1,
          bottom: box?.bottom ?? 1e9,
          // The room the overlay leaves inside its padding (the close button sits above it).
          roomWidth: window.innerWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight),
          roomHeight: window.innerHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom),
          ratio: viewWidth / viewHeight,
        };
      });
      const viewport = page.viewportSize() ?? { width, height: 0 };
      expect(shown.left).toBeGreaterThanOrEqual(0);
      expect(shown.top).toBeGreaterThanOrEqual(0);
      expect(shown.right).toBeLessThanOrEqual(viewport.width);
      expect(shown.bottom).toBeLessThanOrEqual(viewport.height);
      // It meets the room's width or its height…
      const fills = Math.max(shown.width / shown.roomWidth, shown.height / shown.roomHeight);
      expect(fills).toBeGreaterThan(0.98);
      // …and is not stretched.
      expect(shown.width / shown.height).toBeCloseTo(shown.ratio, 1);
      await page.screenshot({
        path: join(
          artifactsDir,
          `report-${kind}-enlarged-${width}${'height' in size ? `x${size.height}` : ''}.png`,
        ),
      });
    } finally {
      await page.close();
    }
  });
});

describe('outcome looks', () => {
  const cases = [
    { reason: 'max-rounds', look: 'failed', title: 'Failed:', todo: '--max-rounds' },
    { reason: 'cancelled', look: 'cancelled', title: 'Cancelled:', todo: 'Run the analysis again' },
    { reason: 'no-data', look: 'no-data', title: 'No data:', todo: 'Put the data files' },
  ] as const;

  it.each(cases)('a $reason run looks $look from the title down', async ({ reason, look, title, todo }) => {
    const outDir = join(root, reason);
    await renderReport(endedTrace(reason), { outDir, formats: ['html'] });
    const page = await open(outDir, 1280);
    try {
      const shown = await page.evaluate(() => ({
        title: document.title,
        bodyClass: document.body.className,
        h1: document.querySelector('h1')?.textContent ?? '',
        band: getComputedStyle(document.querySelector('header.band') ?? document.body).borderTopColor,
        banner: document.querySelector('.banner-outcome')?.textContent ?? '',
        bannerTop: document.querySelector('.banner-outcome')?.getBoundingClientRect().top ?? 1e9,
        answerHeading: document.querySelector('#answer h2')?.textContent ?? '',
        openRounds: document.querySelectorAll('#process details.round[open]').length,
      }));
      expect(shown.title.startsWith(title)).toBe(true);
      expect(shown.h1.startsWith(title)).toBe(true);
      expect(shown.bodyClass).toBe(`look-${look}`);
      expect(shown.band).not.toBe('rgb(26, 127, 55)'); // the answered green
      expect(shown.banner).toContain('What happened.');
      expect(shown.banner).toContain(todo);
      expect(shown.bannerTop).toBeLessThan(900);
      expect(shown.answerHeading).toBe('No answer');
      if (reason !== 'no-data') expect(shown.openRounds).toBeGreaterThanOrEqual(1);
      if (reason === 'max-rounds') {
        await screenshot(page, 'report-failed-screenshot.png');
        await page.setViewportSize({ width: 390, height: 844 });
        await screenshot(page, 'report-failed-screenshot-390.png');
      }
    } finally {
      await page.close();
    }
  });

  it('an answered run has the green band and no outcome banner', async () => {
    const page = await open(demoDir, 1280);
    try {
      const shown = await page.evaluate(() => ({
        title: document.title,
        band: getComputedStyle(document.querySelector('header.band') ?? document.body).borderTopColor,
        banners: document.querySelectorAll('.banner-outcome').length,
        verdict: document.querySelector('.verdict')?.textContent,
      }));
      expect(shown.title.startsWith('Datalyst report:')).toBe(true);
      expect(shown.band).toBe('rgb(26, 127, 55)');
      expect(shown.banners).toBe(0);
      expect(shown.verdict).toBe('Answered');
    } finally {
      await page.close();
    }
  });
});

describe('long names on a phone', () => {
  it('a file name or heading that is one long word breaks instead of pushing the page sideways at 390 px', async () => {
    const trace = makeSyntheticTrace({
      rounds: 1,
      charts: 0,
      figures: 0,
      answer: '## longest_absense_from_school.csv\n\nThe months absent range widely.',
    });
    const records = trace.records.map((record) =>
      record.type === 'run-start'
        ? {
            ...record,
            workspace: {
              ...record.workspace,
              files: record.workspace.files.map((file, index) =>
                index === 0 ? { ...file, path: 'longest_absense_from_school_2023_final_v2.xlsx' } : file,
              ),
            },
          }
        : record,
    );
    const outDir = join(root, 'long-names');
    await renderReport({ ...trace, records }, { outDir, formats: ['html'] });
    const phone = await open(outDir, 390);
    try {
      expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    } finally {
      await phone.close();
    }
  });
});

describe('the demo report printed', () => {
  it("keeps the data section's headers whole on paper (they printed as 'Distin ct', 'Missin g')", async () => {
    // An A4 page's width less the margins, at the print stylesheet.
    const page = await open(demoDir, 680);
    try {
      await page.emulateMedia({ media: 'print' });
      const lines = await page.evaluate(() =>
        Array.from(document.querySelectorAll('table.columns thead th')).map((cell) => {
          const range = document.createRange();
          range.selectNodeContents(cell);
          return { text: cell.textContent ?? '', lines: range.getClientRects().length };
        }),
      );
      expect(lines.length).toBeGreaterThan(0);
      expect(lines.filter(({ text, lines: count }) => count > text.trim().split(/\s+/).length)).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
