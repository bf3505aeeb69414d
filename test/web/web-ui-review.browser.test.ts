import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAIChatModel } from '../../src/index.ts';
import { startServer, type DatalystServer } from '../../src/server/index.ts';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../support/fake-openai-server.ts';
import { containersOwnedBy } from '../server/support/docker-containers.ts';
import {
  expectInert,
  launchChromium,
  openUi,
  seriousViolations,
  type PageWatch,
} from './support/web-harness.ts';

// What a first-time developer found wrong on the page served by `datalyst serve`, one test each.

const text = (body: string) => ({ type: 'text' as const, text: body });
const code = (body: string, analyze = 'Next.') =>
  text(`<Analyze>${analyze}</Analyze>\n<Code>\n\`\`\`python\n${body}\n\`\`\`\n</Code>`);
const API_KEY = 'web-ui-review-key-0123456789abcdef';
const numbersCsv = { name: 'numbers.csv', mimeType: 'text/csv', buffer: Buffer.from('x,y\n1,2\n3,4\n') };

async function ask(watch: PageWatch, question: string): Promise<void> {
  await watch.page.fill('#composer-question', question);
  await watch.page.getByRole('button', { name: 'Ask' }).click();
}

const turnStatus = (page: Page, index: number) =>
  page.locator(`article.turn[data-turn="${index}"] .turn-status`).textContent();
const statusLine = (page: Page) => page.locator('#status').textContent();
const cellTime = (page: Page, index: number) =>
  page.locator(`article.turn[data-turn="${index}"] .step-execution .elapsed`).textContent();

/** The element is wholly on screen, above the composer (which sticks to the bottom of the window). */
const aboveComposer = (locator: Locator) =>
  locator.evaluate((element) => {
    const box = element.getBoundingClientRect();
    const composer = document.getElementById('composer')?.getBoundingClientRect();
    return box.height > 0 && box.top >= 0 && box.bottom <= (composer?.top ?? window.innerHeight);
  });
/** The element is wholly inside the window. */
const onScreen = (locator: Locator) =>
  locator.evaluate((element) => {
    const box = element.getBoundingClientRect();
    return box.height > 0 && box.top >= 0 && box.bottom <= window.innerHeight;
  });

describe('web UI: what a first review found', () => {
  let dataDir: string;
  let fakeModel: FakeOpenAIServer;
  let server: DatalystServer;
  let browser: Browser;
  const engine = () => ({
    createModel: () => createOpenAIChatModel({ baseUrl: fakeModel.baseUrl, model: 'gpt-test' }),
    profile: 'chat' as const,
  });

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-web-review-'));
    fakeModel = await startFakeOpenAIServer();
    server = await startServer({
      dataDir: path.join(dataDir, 'main'),
      port: 0,
      modelId: 'gpt-test',
      engine: engine(),
      maxConcurrentTurns: 1,
    });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await fakeModel?.close();
    await rm(dataDir, { recursive: true, force: true });
    expect(await containersOwnedBy(process.pid)).toEqual([]);
  });

  it('a reload mid-turn: the status line (the live region) says how the re-attached turn ended; reopening ended turns announces nothing; the interrupted cell reads "duration unknown", not 0.0 s', async () => {
    const watch = await openUi(browser, `${server.url}/`);
    const { page } = watch;
    await page.setInputFiles('#file-input', numbersCsv);
    await page.getByText('numbers.csv', { exact: true }).waitFor();
    fakeModel.enqueue(code('import time\nfor i in range(600):\n    time.sleep(0.1)', 'A long wait.'));
    // Asked from the keyboard (Enter on the Ask button): the button is disabled while the turn runs,
    // and the focus goes back to the question box rather than to the page.
    await page.fill('#composer-question', 'Wait a minute.');
    await page.getByRole('button', { name: 'Ask' }).press('Enter');
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('composer-question');
    const running = page.locator('article.turn[data-turn="1"] .step-execution.running');
    await running.waitFor({ timeout: 60_000 });
    await page.reload({ waitUntil: 'load' });
    await running.waitFor({ timeout: 30_000 });
    await page.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => turnStatus(page, 1), { timeout: 60_000 }).toMatch(/^cancelled/);
    // It read "Cancelling question 1…" for good: the re-attached turn's end was never said.
    await expect.poll(() => statusLine(page), { timeout: 10_000 }).toBe('Question 1: cancelled.');
    // The cancelled cell has no recorded end: the seconds this page watched it are not its duration.
    expect(await cellTime(page, 1)).toBe('duration unknown');

    // Reopened once ended (a reload, then from the list): the turn is drawn, its end is not announced again.
    await page.reload({ waitUntil: 'load' });
    await expect.poll(() => turnStatus(page, 1), { timeout: 30_000 }).toMatch(/^cancelled/);
    expect(await statusLine(page)).toBe('Opened the analysis of numbers.csv.');
    // Replayed in an instant, it read "0.0 s".
    expect(await cellTime(page, 1)).toBe('duration unknown');
    await page.getByRole('button', { name: 'New analysis' }).click();
    await page.locator('#thread-list .thread-link').first().click();
    await expect.poll(() => turnStatus(page, 1), { timeout: 30_000 }).toMatch(/^cancelled/);
    expect(await statusLine(page)).toBe('Opened the analysis of numbers.csv.');
    expectInert(watch, server.url);
    await page.context().close();
  });

  it('after Ask the page scrolls to the new turn: its question is in view below a long earlier turn, and only it is the latest', async () => {
    const watch = await openUi(browser, `${server.url}/`);
    const { page } = watch;
    await page.setInputFiles('#file-input', numbersCsv);
    await page.getByText('numbers.csv', { exact: true }).waitFor();
    const paragraphs = Array.from(
      { length: 60 },
      () => 'A paragraph of a long answer about the two columns of the file, read once more.',
    );
    fakeModel.enqueue(code("print('read')"), text(`<Answer>${paragraphs.join('\n\n')}</Answer>`));
    await ask(watch, 'Tell me everything.');
    await expect.poll(() => turnStatus(page, 1), { timeout: 60_000 }).toMatch(/^answered/);
    const first = page.locator('article.turn[data-turn="1"]');
    expect((await first.boundingBox())?.height).toBeGreaterThan(2 * 900);
    // Read from the top, as a long answer is; the composer stays at the bottom of the window.
    await page.evaluate(() => window.scrollTo(0, 0));

    fakeModel.enqueue(text('<Answer>Briefly: two columns.</Answer>'));
    await ask(watch, 'And briefly?');
    const second = page.locator('article.turn[data-turn="2"]');
    await second.waitFor();
    // It appeared below the long turn, out of sight, and the page stayed where it was.
    await expect.poll(() => aboveComposer(second.locator('header.question'))).toBe(true);
    const latest = () =>
      page.locator('article.turn.turn-latest').evaluateAll((turns) => turns.map((turn) => turn.dataset.turn));
    expect(await latest()).toEqual(['2']);
    await expect.poll(() => turnStatus(page, 2), { timeout: 60_000 }).toMatch(/^answered/);
    // Its answer, under the question, is in view too (the question is at the top, not the bottom, of the window).
    expect(await aboveComposer(second.locator('.step-answer'))).toBe(true);
    expectInert(watch, server.url);
    await page.context().close();
  });

  it('the report links save under the names the server gives each format (the notebook is analysis.ipynb, not report.ipynb)', async () => {
    const watch = await openUi(browser, `${server.url}/`);
    const { page } = watch;
    await page.setInputFiles('#file-input', numbersCsv);
    await page.getByText('numbers.csv', { exact: true }).waitFor();
    fakeModel.enqueue(code("print('read')"), text('<Answer>Two columns.</Answer>'));
    await ask(watch, 'What columns?');
    await expect.poll(() => turnStatus(page, 1), { timeout: 60_000 }).toMatch(/^answered/);
    const links = await page.locator('article.turn[data-turn="1"] .report-links a').evaluateAll((anchors) =>
      anchors.map((anchor) => ({
        label: anchor.textContent ?? '',
        href: anchor.getAttribute('href') ?? '',
        // "Open the report" has no download attribute: its name is for the download with a key.
        name: anchor.getAttribute('download') ?? anchor.getAttribute('data-key-download') ?? '',
      })),
    );
    expect(links.map(({ label }) => label)).toEqual(['Open the report', 'HTML', 'Markdown', 'Notebook']);
    for (const link of links) {
      const response = await fetch(new URL(link.href, server.url));
      expect(response.status).toBe(200);
      const disposition = response.headers.get('content-disposition') ?? '';
      await response.arrayBuffer();
      expect({ label: link.label, name: link.name }).toEqual({
        label: link.label,
        name: /filename="([^"]*)"/.exec(disposition)?.[1],
      });
    }
    expect(links.map(({ name }) => name)).toEqual([
      'report.html',
      'report.html',
      'report.md',
      'analysis.ipynb',
    ]);
    expectInert(watch, server.url);
    await page.context().close();
  });

  it('at 390 × 844 the first screen is the conversation: the past analyses open from their button and close again when one is opened', async () => {
    await server.threads.create([]); // one past analysis at least, whatever ran before
    const watch = await openUi(browser, `${server.url}/`, { width: 390, height: 844 });
    const { page } = watch;
    const toggle = page.getByRole('button', { name: 'Past analyses' });
    await expect.poll(() => page.locator('#thread-list li').count()).toBeGreaterThan(0);
    // The question box and its button on the first screen; the list and the key form behind the button.
    expect(await onScreen(page.locator('#composer-question'))).toBe(true);
    expect(await onScreen(page.getByRole('button', { name: 'Ask' }))).toBe(true);
    expect(await page.locator('#thread-list').isVisible()).toBe(false);
    expect(await page.locator('#key-details').isVisible()).toBe(false);
    expect(await toggle.getAttribute('aria-expanded')).toBe('false');
    expect(await seriousViolations(page)).toEqual([]);

    await toggle.click();
    expect(await toggle.getAttribute('aria-expanded')).toBe('true');
    expect(await page.locator('#thread-list .thread-link').first().isVisible()).toBe(true);
    expect(await page.locator('#key-details summary').isVisible()).toBe(true);
    expect(await seriousViolations(page)).toEqual([]);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);

    // Opening one puts the list away again; the focus goes back to the button, not to a hidden one.
    await page.locator('#thread-list .thread-link').first().click();
    await expect.poll(() => statusLine(page)).toMatch(/^Opened the analysis/);
    expect(await toggle.getAttribute('aria-expanded')).toBe('false');
    expect(await page.locator('#thread-list').isVisible()).toBe(false);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('threads-toggle');
    expect(await onScreen(page.locator('#composer-question'))).toBe(true);
    expectInert(watch, server.url);
    await page.context().close();
  });

  it('at 390 × 844 a server that needs its API key opens the list to its key form, in view and focused', async () => {
    const keyed = await startServer({
      dataDir: path.join(dataDir, 'keyed'),
      port: 0,
      modelId: 'gpt-test',
      engine: engine(),
      apiKey: API_KEY,
      maxConcurrentTurns: 1,
    });
    try {
      const watch = await openUi(browser, `${keyed.url}/`, { width: 390, height: 844 });
      const { page } = watch;
      // Before, the prompt and the form were behind a button nothing opened: the page just failed.
      await expect.poll(() => page.locator('#key-prompt').textContent()).toMatch(/needs its API key/);
      expect(await page.getByRole('button', { name: 'Past analyses' }).getAttribute('aria-expanded')).toBe(
        'true',
      );
      expect(await page.locator('#key-input').isVisible()).toBe(true);
      expect(await onScreen(page.locator('#key-input'))).toBe(true);
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('key-input');
      expect(await seriousViolations(page)).toEqual([]);
      await page.fill('#key-input', API_KEY);
      await page.getByRole('button', { name: 'Use this key' }).click();
      await expect.poll(() => page.locator('#key-prompt').isHidden()).toBe(true);
      await expect.poll(() => statusLine(page)).toBe('The API key is set for this tab.');
      expectInert(watch, keyed.url);
      await page.context().close();
    } finally {
      await keyed.close();
    }
  });
});
