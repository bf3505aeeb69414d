import type { Socket } from 'node:net';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
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

const text = (body: string) => ({ type: 'text' as const, text: body });
const code = (body: string, analyze = 'Next.') =>
  text(`<Analyze>${analyze}</Analyze>\n<Code>\n\`\`\`python\n${body}\n\`\`\`\n</Code>`);
const API_KEY = 'web-ui-test-key-0123456789abcdef';

async function ask(watch: PageWatch, question: string): Promise<void> {
  await watch.page.fill('#composer-question', question);
  await watch.page.getByRole('button', { name: 'Ask' }).click();
}

const turnStatus = (watch: PageWatch, index: number) =>
  watch.page.locator(`article.turn[data-turn="${index}"] .turn-status`).textContent();

/** What the step list of a turn shows, in order: profile, analyze, code, execution, answer… */
const stepKinds = (watch: PageWatch, index: number) =>
  watch.page
    .locator(`article.turn[data-turn="${index}"] ol.steps > li`)
    .evaluateAll((items) =>
      items.map((item) =>
        item.classList.contains('step-profile')
          ? 'profile'
          : item.classList.contains('step-execution')
            ? 'execution'
            : (item.getAttribute('data-kind') ?? item.className),
      ),
    );

describe('web UI: the API key from the browser, and SSE re-attach after a dropped connection', () => {
  let dataDir: string;
  let fakeModel: FakeOpenAIServer;
  let open: DatalystServer;
  let keyed: DatalystServer;
  let browser: Browser;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-web-key-'));
    fakeModel = await startFakeOpenAIServer();
    const engine = {
      createModel: () => createOpenAIChatModel({ baseUrl: fakeModel.baseUrl, model: 'gpt-test' }),
      profile: 'chat' as const,
    };
    open = await startServer({
      dataDir: path.join(dataDir, 'open'),
      port: 0,
      modelId: 'gpt-test',
      engine,
      maxConcurrentTurns: 1,
    });
    // A server that needs its key (as one bound off loopback must); on loopback here, as tests are.
    keyed = await startServer({
      dataDir: path.join(dataDir, 'keyed'),
      port: 0,
      modelId: 'gpt-test',
      engine,
      apiKey: API_KEY,
      maxConcurrentTurns: 1,
    });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await open?.close();
    await keyed?.close();
    await fakeModel?.close();
    await rm(dataDir, { recursive: true, force: true });
    expect(await containersOwnedBy(process.pid)).toEqual([]);
  });

  it('a connection dropped mid-turn: the UI re-attaches with Last-Event-ID and shows every event once, in order', async () => {
    // Every events request the server gets, with its Last-Event-ID and its socket (to drop it as a network would).
    const eventRequests: { lastEventId: string | null; socket: Socket }[] = [];
    open.app.server.on(
      'request',
      (request: { url?: string; headers: Record<string, unknown>; socket: Socket }) => {
        if (!/\/turns\/\d+\/events/.test(request.url ?? '')) return;
        const id = request.headers['last-event-id'];
        eventRequests.push({ lastEventId: typeof id === 'string' ? id : null, socket: request.socket });
      },
    );
    const watch = await openUi(browser, `${open.url}/`);
    const { page } = watch;
    await page.setInputFiles('#file-input', {
      name: 'numbers.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from('x,y\n1,2\n3,4\n'),
    });
    // The profile before any question: the file, its columns with their kinds.
    await page.locator('#profiles .file-profile').waitFor({ timeout: 60_000 });
    expect(await page.locator('#profiles summary').textContent()).toContain('numbers.csv');
    expect(await page.locator('#profiles tbody th').allTextContents()).toEqual(['x', 'y']);
    expect(await page.locator('#profiles tbody tr').first().textContent()).toMatch(/integer/);

    fakeModel.enqueue(
      code(
        [
          'import time',
          'for i in range(80):',
          "    print('tick', i, flush=True)",
          '    time.sleep(0.1)',
        ].join('\n'),
        'Count slowly.',
      ),
      text('<Answer>Counted to 79.</Answer>'),
    );
    await ask(watch, 'Count slowly.');
    const live = page.locator('article.turn[data-turn="1"] .step-execution.running .live-output');
    await expect.poll(() => live.textContent(), { timeout: 60_000 }).toContain('tick 5');
    const before = eventRequests.length;
    expect(before).toBeGreaterThan(0);
    // The network drops: the server end of every events connection is destroyed mid-stream.
    for (const request of eventRequests) request.socket.destroy();
    await expect.poll(() => eventRequests.length, { timeout: 30_000 }).toBeGreaterThan(before);
    const reattach = eventRequests[before];
    expect(reattach?.lastEventId).toMatch(/^[1-9]\d*$/);
    // Still running after the re-attach: every line once, in order, none lost.
    await expect.poll(() => live.textContent(), { timeout: 30_000 }).toContain('tick 40');
    const ticks = Array.from((await live.textContent())?.matchAll(/tick (\d+)/g) ?? [], (m) => Number(m[1]));
    expect(ticks).toEqual(ticks.map((_, index) => index));
    await expect.poll(() => turnStatus(watch, 1), { timeout: 60_000 }).toMatch(/^answered/);
    expect(await stepKinds(watch, 1)).toEqual(['profile', 'analyze', 'code', 'execution', 'answer']);
    const stdout = await page.locator('article.turn[data-turn="1"] .step-execution pre.stdout').textContent();
    expect(stdout?.match(/tick \d+/g)).toHaveLength(80);
    // The answer's number comes grounded from the server: 79 was printed by the cell.
    const link = page.locator('article.turn[data-turn="1"] .step-answer a.num-verified');
    expect(await link.textContent()).toMatch(/^79E1$/);
    expect(watch.consoleErrors.filter((line) => !/ERR_|net::|Failed to load/.test(line))).toEqual([]);
    expectInert(watch, open.url);
    await page.context().close();
  });

  it('with a key: a 401 asks for it, the key is kept in the tab and sent as a bearer token; charts, profile and report come with it; a thread is deleted after a confirmation', async () => {
    const watch = await openUi(browser, `${keyed.url}/`);
    const { page } = watch;
    const unauthorized: string[] = [];
    page.on('request', (request) => {
      if (
        new URL(request.url()).pathname.startsWith('/v1/') &&
        request.headers().authorization !== `Bearer ${API_KEY}`
      )
        unauthorized.push(request.url());
    });
    // The page itself loads without the key; its first API call gets 401 and a clear prompt.
    const prompt = page.locator('#key-prompt');
    await expect.poll(() => prompt.textContent()).toMatch(/needs its API key/);
    expect(
      await page.locator('#key-details').evaluate((details) => (details as HTMLDetailsElement).open),
    ).toBe(true);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('key-input');
    expect(await seriousViolations(page)).toEqual([]); // the key prompt

    // A wrong key: refused, and said so.
    await page.fill('#key-input', 'not-the-key-but-long-enough');
    await page.getByRole('button', { name: 'Use this key' }).click();
    await expect.poll(() => prompt.textContent()).toMatch(/refused this API key/);

    await page.fill('#key-input', API_KEY);
    await page.getByRole('button', { name: 'Use this key' }).click();
    await expect.poll(() => prompt.isHidden()).toBe(true);
    expect(await page.evaluate(() => sessionStorage.getItem('datalyst.apiKey'))).toBe(API_KEY);
    expect(await page.locator('#key-state').textContent()).toBe('set for this tab');
    unauthorized.length = 0; // the calls before the key was given

    await page.setInputFiles('#file-input', {
      name: 'series.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from('k,v\na,3\nb,5\n'),
    });
    await page.locator('#profiles .file-profile').waitFor({ timeout: 60_000 });
    expect(await page.locator('#profiles').textContent()).toContain('series.csv');
    // A second file before the question: the profile covers both, with how the second was read.
    await page.setInputFiles('#file-input', {
      name: 'places.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from('name,city\nJos\xe9,Z\xfcrich\n', 'latin1'),
    });
    await expect.poll(() => page.locator('#profiles .file-profile').count(), { timeout: 60_000 }).toBe(2);
    expect(await page.locator('#profiles .notes').textContent()).toMatch(/not UTF-8: it was decoded as/);
    expect(await page.locator('#profiles').textContent()).toContain('Zürich');
    expect(await page.locator('#profiles caption').allTextContents()).toEqual(
      expect.arrayContaining(['Table — 2 rows, 2 columns', 'Table — 1 row, 2 columns']),
    );
    expect(await keyed.threads.list()).toHaveLength(1);
    fakeModel.enqueue(
      code(
        [
          'import pandas as pd',
          "frame = pd.read_csv('series.csv')",
          "print('total', frame.v.sum() * 100 + 17)",
          "{'$schema': 'https://vega.github.io/schema/vega-lite/v5.json', 'data': {'values': frame.to_dict('records')}, 'mark': 'bar', 'encoding': {'x': {'field': 'k', 'type': 'nominal'}, 'y': {'field': 'v', 'type': 'quantitative'}}}",
        ].join('\n'),
      ),
      text(
        '<Answer>The total is 817, see [the docs](https://example.com/guide) or [this](javascript:alert(1)); 4242 is a guess.</Answer>',
      ),
    );
    await ask(watch, 'What is the total?');
    await expect.poll(() => turnStatus(watch, 1), { timeout: 60_000 }).toMatch(/^answered/);
    const turn = page.locator('article.turn[data-turn="1"]');
    // The chart came through fetch with the key, shown from a blob: URL.
    const chart = turn.locator('img.chart');
    await expect
      .poll(() => chart.evaluate((image) => (image as HTMLImageElement).naturalWidth), { timeout: 30_000 })
      .toBeGreaterThan(0);
    expect(await chart.getAttribute('src')).toMatch(/^blob:/);
    // Grounded by the server: 817 verified (E1), 4242 unverified.
    expect(await turn.locator('.step-answer a.num-verified').textContent()).toBe('817E1');
    expect(await turn.locator('.step-answer mark.num-unverified').textContent()).toBe('4242?');
    // Links: http(s) only, in a new tab without opener or referrer; javascript: stays text.
    const external = turn.locator('.step-answer a.external');
    expect(await external.count()).toBe(1);
    expect(await external.getAttribute('href')).toBe('https://example.com/guide');
    expect(await external.getAttribute('target')).toBe('_blank');
    expect(await external.getAttribute('rel')).toBe('noopener noreferrer');
    expect(await turn.locator('.step-answer').textContent()).toContain('[this](javascript:alert(1))');

    // The report, downloaded with the key.
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      turn.getByRole('link', { name: 'HTML' }).click(),
    ]);
    const saved = path.join(dataDir, 'keyed-report.html');
    await download.saveAs(saved);
    expect(await readFile(saved, 'utf8')).toContain('What is the total?');
    expect(unauthorized).toEqual([]);

    // "Open the report" with a key downloads it too, and the page says why it does not open it.
    expect(await turn.locator('.report-key-note').textContent()).toMatch(/downloaded, not opened/);
    await Promise.all([
      page.waitForEvent('download'),
      turn.getByRole('link', { name: 'Open the report' }).click(),
    ]);
    await expect
      .poll(() => page.locator('#status').textContent())
      .toMatch(/a blob: URL\) would take this page’s policy/);
    // Why: Chromium gives a tab opened from the fetched HTML (a blob: URL) this page's origin and
    // policy, whose style-src 'self' refuses the report's inline styles.
    const [blobTab] = await Promise.all([
      page.context().waitForEvent('page'),
      page.evaluate(async (key) => {
        const response = await fetch(document.querySelector<HTMLAnchorElement>('.report-links a')!.href, {
          headers: { authorization: `Bearer ${key}` },
        });
        const url = URL.createObjectURL(new Blob([await response.text()], { type: 'text/html' }));
        const link = Object.assign(document.createElement('a'), {
          href: url,
          target: '_blank',
          rel: 'noopener',
        });
        document.body.append(link);
        link.click();
        link.remove();
      }, API_KEY),
    ]);
    await blobTab.waitForLoadState('load');
    await expect
      .poll(() => blobTab.evaluate(() => document.querySelector('h1')?.textContent ?? ''))
      .not.toBe('');
    expect(blobTab.url()).toMatch(new RegExp(`^blob:${keyed.url}/`));
    // The report's own style says `body { margin: 0 }`; refused, the browser's default 8px stays.
    expect(await blobTab.evaluate(() => getComputedStyle(document.body).margin)).toBe('8px');
    await blobTab.close();

    // Delete, in place: "Keep" keeps it; "Delete for good" removes it on the server and clears the view.
    const item = page.locator('#thread-list li').first();
    await item.getByRole('button', { name: /^Delete the analysis/ }).click();
    expect(await seriousViolations(page)).toEqual([]); // the confirmation
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Keep');
    await item.getByRole('button', { name: 'Keep' }).click();
    expect(await keyed.threads.list()).toHaveLength(1);
    await item.getByRole('button', { name: /^Delete the analysis/ }).click();
    await item.getByRole('button', { name: 'Delete for good' }).click();
    await expect.poll(() => page.locator('#thread-list li').count()).toBe(0);
    expect(await keyed.threads.list()).toHaveLength(0);
    expect(await page.locator('article.turn').count()).toBe(0);
    expect(watch.dialogs).toEqual([]);
    expectInert(watch, keyed.url);
    await page.context().close();
  });

  it('a 401 on the event stream mid-turn: once the key is entered, the running turn is followed again in place, every event once', async () => {
    const eventRequests: { lastEventId: string | null; socket: Socket }[] = [];
    keyed.app.server.on(
      'request',
      (request: { url?: string; headers: Record<string, unknown>; socket: Socket }) => {
        if (!/\/turns\/\d+\/events/.test(request.url ?? '')) return;
        const id = request.headers['last-event-id'];
        eventRequests.push({ lastEventId: typeof id === 'string' ? id : null, socket: request.socket });
      },
    );
    const watch = await openUi(browser, `${keyed.url}/`);
    const { page } = watch;
    const prompt = page.locator('#key-prompt');
    await expect.poll(() => prompt.textContent()).toMatch(/needs its API key/);
    await page.fill('#key-input', API_KEY);
    await page.getByRole('button', { name: 'Use this key' }).click();
    await expect.poll(() => prompt.isHidden()).toBe(true);
    await page.setInputFiles('#file-input', {
      name: 'numbers.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from('x,y\n1,2\n3,4\n'),
    });
    await page.locator('#profiles .file-profile').waitFor({ timeout: 60_000 });
    fakeModel.enqueue(
      code(
        [
          'import time',
          'for i in range(120):',
          "    print('tick', i, flush=True)",
          '    time.sleep(0.1)',
        ].join('\n'),
        'Count slowly.',
      ),
      text('<Answer>Counted to 119.</Answer>'),
    );
    await ask(watch, 'Count slowly.');
    const live = page.locator('article.turn[data-turn="1"] .step-execution.running .live-output');
    await expect.poll(() => live.textContent(), { timeout: 60_000 }).toContain('tick 5');
    // The key is forgotten, then the connection drops: the re-attach is refused with 401.
    await page.getByRole('button', { name: 'Forget' }).click();
    const before = eventRequests.length;
    for (const request of eventRequests) request.socket.destroy();
    await expect.poll(() => prompt.textContent(), { timeout: 30_000 }).toMatch(/needs its API key/);
    await expect.poll(() => turnStatus(watch, 1), { timeout: 30_000 }).toMatch(/^waiting for the API key/);
    const refusedAt = eventRequests.length;
    expect(refusedAt).toBeGreaterThan(before);
    // The key again: the same turn view follows the stream from its last event, without reopening the thread.
    await page.fill('#key-input', API_KEY);
    await page.getByRole('button', { name: 'Use this key' }).click();
    await expect.poll(() => eventRequests.length, { timeout: 30_000 }).toBeGreaterThan(refusedAt);
    expect(eventRequests[refusedAt]?.lastEventId).toMatch(/^[1-9]\d*$/);
    await expect.poll(() => turnStatus(watch, 1), { timeout: 60_000 }).toMatch(/^answered/);
    expect(await page.locator('article.turn').count()).toBe(1);
    expect(await stepKinds(watch, 1)).toEqual(['profile', 'analyze', 'code', 'execution', 'answer']);
    const stdout = await page.locator('article.turn[data-turn="1"] .step-execution pre.stdout').textContent();
    const ticks = Array.from(stdout?.matchAll(/tick (\d+)/g) ?? [], (m) => Number(m[1]));
    expect(ticks).toEqual(Array.from({ length: 120 }, (_, index) => index));
    expect(await page.locator('article.turn[data-turn="1"] .step-answer').textContent()).toContain(
      'Counted to 119',
    );
    expect(watch.dialogs).toEqual([]);
    expectInert(watch, keyed.url);
    await page.context().close();
  });
});
