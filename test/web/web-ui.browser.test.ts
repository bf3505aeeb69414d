import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOfflineAnalyst } from '../../src/index.ts';
import { startServer, type DatalystServer } from '../../src/server/index.ts';
import { webContentSecurityPolicy } from '../../src/server/web-ui.ts';
import { containersOwnedBy } from '../server/support/docker-containers.ts';
import { expectInert, launchChromium, openUi, seriousViolations } from './support/web-harness.ts';

const ordersCsv = path.resolve('workspace-examples/sales/orders.csv');
const artifactsDir = path.resolve('test-artifacts');

describe('web UI on datalyst serve: the offline analyst end to end in Chromium', () => {
  let dataDir: string;
  let server: DatalystServer;
  let browser: Browser;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-web-'));
    server = await startServer({
      dataDir,
      port: 0,
      modelId: 'datalyst-offline-analyst',
      engine: { createModel: () => createOfflineAnalyst() },
      maxConcurrentTurns: 1,
    });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await rm(dataDir, { recursive: true, force: true });
    expect(await containersOwnedBy(process.pid)).toEqual([]);
  });

  it('is served at / under its strict CSP', async () => {
    const response = await fetch(`${server.url}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-security-policy')).toBe(webContentSecurityPolicy);
    const html = await response.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/); // no inline script
    expect(html).not.toMatch(/https?:\/\//);
  });

  it('upload → profile → ask → steps in order → grounded answer → follow-up → report downloaded and opened', async () => {
    const watch = await openUi(browser, `${server.url}/`);
    const { page } = watch;
    expect(await seriousViolations(page)).toEqual([]); // the empty start view
    await page.setInputFiles('#file-input', ordersCsv);
    await page.getByText('orders.csv', { exact: true }).waitFor();
    // Its profile before any question: the file, its columns with their kinds, sample values.
    await page.locator('#profiles .file-profile').waitFor({ timeout: 60_000 });
    expect(await page.locator('#profiles summary').textContent()).toContain('orders.csv');
    expect(await page.locator('#profiles tbody tr').count()).toBeGreaterThan(2);
    expect(await page.locator('#profiles thead').first().textContent()).toContain('Sample values');
    // …and its first rows, under the same column names.
    const columnNames = await page
      .locator('#profiles .table-profile > .table-scroll tbody th')
      .allTextContents();
    expect(await page.locator('#profiles .first-rows thead th').allTextContents()).toEqual(columnNames);
    expect(await page.locator('#profiles .first-rows tbody tr').count()).toBe(5);
    // The statistics as a person reads them (not as the profile's field names): a measure's mean and spread
    // with a histogram, a category's most frequent values; an id's values, each seen once, are not "frequent".
    const summaryOf = (column: string) =>
      page
        .locator('#profiles tbody tr', { has: page.locator(`th:text-is("${column}")`) })
        .locator('.column-summary');
    expect(await summaryOf('units').textContent()).toMatch(/^mean 5\.161 · std 1\.765 · skew 0\.5783$/);
    expect(await summaryOf('units').locator('svg.histogram').getAttribute('aria-label')).toMatch(
      /^Distribution of units: \d+ equal bins from 2 to 12, rows per bin \d/,
    );
    expect(await summaryOf('region').textContent()).toBe(
      'most frequent: North (373) · East (358) · South (236) …',
    );
    expect(await summaryOf('order_id').textContent()).toBe('each value once');
    // A measure's range is grouped like its mean: "26.64 – 2,625.97", not "2625.97".
    const rangeOf = (column: string) =>
      page
        .locator('#profiles tbody tr', { has: page.locator(`th:text-is("${column}")`) })
        .locator('td')
        .nth(3);
    expect(await rangeOf('revenue').textContent()).toBe('26.64 – 2,625.97');
    expect(await page.locator('#profiles').textContent()).not.toMatch(/topValues|histogram:|skewness/);
    expect(await page.locator('#profiles .profile-facts').first().textContent()).toBe(
      'Correlated (|r| ≥ 0.5): unit_price and revenue (r = 0.90), units and discount_pct (r = 0.64).',
    );
    expect(await seriousViolations(page)).toEqual([]); // the profile view
    await mkdir(artifactsDir, { recursive: true });
    await page.locator('#profiles').evaluate((element) => element.scrollIntoView({ block: 'start' }));
    await page.screenshot({ path: path.join(artifactsDir, 'web-1280-profile-light.png') });

    await page
      .getByRole('button', { name: 'Describe this data: what is in it, and what stands out?' })
      .click();
    await expect.poll(() => page.inputValue('#composer-question')).toContain('Describe this data');
    await page.getByRole('button', { name: 'Ask' }).click();

    const first = page.locator('article.turn[data-turn="1"]');
    await first.locator('.step-answer').waitFor({ timeout: 120_000 });
    await expect
      .poll(() => first.locator('.turn-status').textContent(), { timeout: 30_000 })
      .toMatch(/^answered/);

    // The profile came first: the file, its columns with their kinds.
    const profile = first.locator('.step-profile');
    expect(await profile.textContent()).toContain('orders.csv');
    expect(await profile.locator('tbody tr').count()).toBeGreaterThan(2);

    // Steps in the order they streamed: profile, then Analyze/Code/Output…, the answer last.
    const kinds = await first
      .locator('ol.steps > li')
      .evaluateAll((items) =>
        items.map((item) =>
          item.classList.contains('step-profile')
            ? 'profile'
            : item.classList.contains('step-execution')
              ? 'execution'
              : (item.getAttribute('data-kind') ?? 'other'),
        ),
      );
    expect(kinds[0]).toBe('profile');
    expect(kinds.at(-1)).toBe('answer');
    const firstCode = kinds.indexOf('code');
    expect(firstCode).toBeGreaterThan(0);
    expect(kinds.indexOf('execution')).toBeGreaterThan(firstCode);
    expect(kinds.indexOf('analyze')).toBeLessThan(firstCode);
    // Highlighted code, a finished cell with its output.
    expect(await first.locator('.step-code .hljs-keyword').count()).toBeGreaterThan(0);
    expect(await first.locator('.step-execution.cell-ok pre.stdout').count()).toBeGreaterThan(0);

    // The answer's numbers link to the output that printed them, and that output is on the page.
    const links = first.locator('.step-answer a.num-verified');
    expect(await links.count()).toBeGreaterThan(0);
    const href = await links.first().getAttribute('href');
    expect(href).toMatch(/^#out-E\d+$/);
    expect(await page.locator(href ?? '#none').count()).toBe(1);
    await links.first().click();
    expect(await page.evaluate(() => window.location.hash)).toBe(href);
    // The output's tag sits on the baseline, a boxed "E3" beside the number, not a raised one read as an exponent.
    expect(
      await links
        .first()
        .locator('sup')
        .evaluate((tag) => getComputedStyle(tag).verticalAlign),
    ).toBe('baseline');
    expect(await first.locator('.grounding-key').textContent()).toContain(
      'A number tagged E12 was printed by output E12',
    );
    // Figures and charts are captioned as the report captions them, not with the kernel's ids.
    const captions = await first.locator('figcaption').allTextContents();
    expect(captions.length).toBeGreaterThan(0);
    expect(captions.filter((caption) => !/^(?:Figure|Chart) \d+ of output E\d+$/.test(caption))).toEqual([]);

    // Follow-up in the same thread.
    await page.fill('#composer-question', 'Which region has the highest revenue?');
    await page.locator('#composer-question').press('Control+Enter');
    const second = page.locator('article.turn[data-turn="2"]');
    await second.locator('.step-answer').waitFor({ timeout: 120_000 });
    await expect
      .poll(() => second.locator('.turn-status').textContent(), { timeout: 30_000 })
      .toMatch(/^answered/);
    expect(await page.locator('article.turn').count()).toBe(2);
    const threads = await server.threads.list();
    expect(threads).toHaveLength(1);
    expect(threads[0]?.turns.map((turn) => turn.status)).toEqual(['finished', 'finished']);

    // The report: downloaded, and opened in Chromium from disk.
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      second.getByRole('link', { name: 'HTML' }).click(),
    ]);
    const saved = path.join(dataDir, 'downloaded-report.html');
    await download.saveAs(saved);
    const html = await readFile(saved, 'utf8');
    // The thread's report holds both questions.
    expect(html).toContain('Describe this data');
    expect(html).toContain('Which region has the highest revenue?');
    const reportPage = await browser.newPage();
    await reportPage.goto(`file://${saved}`);
    expect(await reportPage.title()).not.toBe('');
    expect(await reportPage.locator('body').textContent()).toContain('orders.csv');
    await reportPage.close();

    const [markdown] = await Promise.all([
      page.waitForEvent('download'),
      second.getByRole('link', { name: 'Markdown' }).click(),
    ]);
    const markdownPath = path.join(dataDir, 'report.md');
    await markdown.saveAs(markdownPath);
    expect(await readFile(markdownPath, 'utf8')).toContain('Which region has the highest revenue?');

    // Past threads: listed, and reopening one replays its turns from their event logs.
    await page.getByRole('button', { name: 'New analysis' }).click();
    expect(await page.locator('article.turn').count()).toBe(0);
    await page.locator('#thread-list button').first().click();
    await page.locator('article.turn[data-turn="2"] .step-answer').waitFor();
    expect(await page.locator('article.turn').count()).toBe(2);

    // Screenshots for docs/ (copied from test-artifacts/ by hand): 1280 and 390 px, light and dark.
    await mkdir(artifactsDir, { recursive: true });

    for (const [width, scheme] of [
      [1280, 'light'],
      [1280, 'dark'],
      [390, 'light'],
      [390, 'dark'],
    ] as const) {
      await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
      await page.emulateMedia({ colorScheme: scheme });
      // The first answer, with the figure above it, in view.
      await page
        .locator('article.turn[data-turn="1"] .step-answer')
        .evaluate((answer) => answer.scrollIntoView({ block: 'start' }));
      await page.evaluate(() => window.scrollBy(0, -260));
      await page.screenshot({ path: path.join(artifactsDir, `web-${width}-${scheme}.png`) });
      // The thread view with its profile, steps, outputs and answers, at each width and scheme.
      expect(await seriousViolations(page)).toEqual([]);
      // Readable at the width: the page itself never scrolls sideways (wide tables and code scroll in their own box).
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      // Nor do the profile's headers break inside a word ("Miss/ing"): the table scrolls instead.
      const headerLines = await page
        .locator('article.turn[data-turn="1"] .step-profile thead th')
        .evaluateAll((cells) =>
          cells.map((cell) => {
            const range = document.createRange();
            range.selectNodeContents(cell);
            return { text: cell.textContent ?? '', lines: range.getClientRects().length };
          }),
        );
      // A header may wrap between its words ("Sample / values"), never inside one.
      expect(headerLines.filter(({ text, lines }) => lines > text.trim().split(/\s+/).length)).toEqual([]);
    }

    expect(watch.consoleErrors).toEqual([]);
    expectInert(watch, server.url);
    await page.context().close();
  });
});
