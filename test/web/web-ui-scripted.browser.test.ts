import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAIChatModel } from '../../src/index.ts';
import { startServer, type DatalystServer } from '../../src/server/index.ts';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../support/fake-openai-server.ts';
import { containersOwnedBy } from '../server/support/docker-containers.ts';
import { expectInert, launchChromium, openUi, type PageWatch } from './support/web-harness.ts';

const text = (body: string) => ({ type: 'text' as const, text: body });
const code = (body: string, analyze = 'Next.') =>
  text(`<Analyze>${analyze}</Analyze>\n<Code>\n\`\`\`python\n${body}\n\`\`\`\n</Code>`);

/** The payloads of the report's safety tests (test/report/report-safety.test.ts), plus a remote image. */
const payloads = [
  '<script>window.__xss = "script"</script>',
  `<img src=x onerror="window.__xss = 'img'">`,
  `<svg onload="window.__xss = 'svg'">`,
  "[click me](javascript:window.__xss='md')",
  '<img src="https://tracker.example/pixel.png">',
  `<a href="javascript:alert('a')">link</a>`,
];
const csvField = (value: string) => `"${value.replace(/"/g, '""')}"`;

async function ask(watch: PageWatch, question: string): Promise<void> {
  await watch.page.fill('#composer-question', question);
  await watch.page.getByRole('button', { name: 'Ask' }).click();
}

const turnStatus = (watch: PageWatch, index: number) =>
  watch.page.locator(`article.turn[data-turn="${index}"] .turn-status`).textContent();

describe('web UI with a scripted model on the real sandbox', () => {
  let dataDir: string;
  let fakeModel: FakeOpenAIServer;
  let server: DatalystServer;
  let browser: Browser;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-web-scripted-'));
    fakeModel = await startFakeOpenAIServer();
    server = await startServer({
      dataDir,
      port: 0,
      modelId: 'gpt-test',
      engine: {
        createModel: () => createOpenAIChatModel({ baseUrl: fakeModel.baseUrl, model: 'gpt-test' }),
        profile: 'chat',
      },
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

  it('cancel during a long cell: the running cell shows its live output and elapsed time, a reload re-follows it, the turn ends cancelled, the thread stays usable and its written file downloads', async () => {
    const watch = await openUi(browser, `${server.url}/`);
    const { page } = watch;
    await page.setInputFiles('#file-input', {
      name: 'numbers.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from('x,y\n1,2\n3,4\n'),
    });
    await page.getByText('numbers.csv', { exact: true }).waitFor();
    // A file the server refuses: its reason is shown, nothing is added.
    await page.setInputFiles('#file-input', {
      name: 'tool.exe',
      mimeType: 'application/octet-stream',
      buffer: Buffer.from('MZ'),
    });
    await expect
      .poll(() => page.locator('#status').textContent())
      .toMatch(/^tool\.exe was not uploaded: Files of type/);
    expect(await page.locator('#file-list li').count()).toBe(1);
    fakeModel.enqueue(
      code(
        [
          'import time',
          'for i in range(600):',
          "    print('tick', i, flush=True)",
          '    time.sleep(0.1)',
        ].join('\n'),
        'A long loop.',
      ),
    );
    await ask(watch, 'Count slowly.');
    const cell = page.locator('article.turn[data-turn="1"] .step-execution.running');
    await cell.waitFor({ timeout: 60_000 });
    // The cell's lines appear as it prints them, and its elapsed time ticks.
    await expect
      .poll(() => cell.locator('.live-output').textContent(), { timeout: 30_000 })
      .toContain('tick 3');
    await expect
      .poll(() => cell.locator('.elapsed').textContent(), { timeout: 30_000 })
      .toMatch(/^[1-9]\d*\.\d s$/);
    // A reload mid-cell reopens the thread (its id is in the address) and follows the running turn again;
    // the cell's time goes on from when it began (the server's started_ms), it does not start over at 0.
    const secondsBeforeReload = parseFloat((await cell.locator('.elapsed').textContent()) ?? '');
    await page.reload({ waitUntil: 'load' });
    await cell.waitFor({ timeout: 30_000 });
    expect(parseFloat((await cell.locator('.elapsed').textContent()) ?? '')).toBeGreaterThanOrEqual(
      secondsBeforeReload,
    );
    await expect
      .poll(() => cell.locator('.live-output').textContent(), { timeout: 30_000 })
      .toContain('tick');
    await page.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => turnStatus(watch, 1), { timeout: 60_000 }).toMatch(/^cancelled/);
    expect(await page.locator('#cancel').isHidden()).toBe(true);

    // The thread is usable: a follow-up reads the file and answers.
    fakeModel.enqueue(
      code(
        [
          'import pandas as pd',
          "frame = pd.read_csv('numbers.csv')",
          "frame.to_csv('summary.csv', index=False)",
          "print('rows', len(frame) * 1000 + 234)",
        ].join('\n'),
      ),
      text('<Answer>The file has 2234 rows by this count.</Answer>'),
    );
    await ask(watch, 'How many rows?');
    await expect.poll(() => turnStatus(watch, 2), { timeout: 60_000 }).toMatch(/^answered/);
    const link = page.locator('article.turn[data-turn="2"] .step-answer a.num-verified');
    expect(await link.textContent()).toMatch(/^2234E\d+$/);
    // The file the code wrote, downloaded from the turn's list.
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page
        .locator('article.turn[data-turn="2"] .artifacts')
        .getByRole('link', { name: /summary\.csv$/ })
        .click(),
    ]);
    const saved = path.join(dataDir, 'summary-downloaded.csv');
    await download.saveAs(saved);
    expect(await readFile(saved, 'utf8')).toBe('x,y\n1,2\n3,4\n');
    const threads = await server.threads.list();
    expect(threads[0]?.turns.map((turn) => turn.status)).toEqual(['cancelled', 'finished']);
    expectInert(watch, server.url);
    await page.context().close();
  });

  it('answers an <Ask>: the question is shown, the reply goes as the next turn', async () => {
    const watch = await openUi(browser, `${server.url}/`);
    const { page } = watch;
    // With data: a thread with nothing readable ends `no-data` before the model is asked.
    await page.setInputFiles('#file-input', {
      name: 'sales.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from('year,revenue\n2023,10\n2024,12\n'),
    });
    await page.getByText('sales.csv', { exact: true }).waitFor();
    fakeModel.enqueue(text('<Analyze>Unclear.</Analyze>\n<Ask>Which year should I look at?</Ask>'));
    await ask(watch, 'Summarise the year.');
    await expect
      .poll(() => turnStatus(watch, 1), { timeout: 60_000 })
      .toBe('waiting for your reply — Asked a question in round 1.');
    expect(await page.locator('.step-ask').textContent()).toContain('Which year should I look at?');
    expect(await page.locator('#composer-label').textContent()).toBe('Your reply to the question above');
    fakeModel.enqueue(text('<Answer>Looking at 2024 as asked.</Answer>'));
    // By keyboard: type the reply, Tab to Ask, Enter.
    await page.focus('#composer-question');
    await page.keyboard.type('2024');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('ask');
    await page.keyboard.press('Enter');
    await expect.poll(() => turnStatus(watch, 2), { timeout: 60_000 }).toMatch(/^answered/);
    expect(await page.locator('article.turn[data-turn="2"] .step-answer').textContent()).toContain('2024');
    expectInert(watch, server.url);
    await page.context().close();
  });

  it('a file added after the first question: the profile is fetched again with the next question and shows both files', async () => {
    const watch = await openUi(browser, `${server.url}/`);
    const { page } = watch;
    const profileRequests = () =>
      watch.requests.filter((url) => /\/v1\/threads\/[^/]+\/profile$/.test(url)).length;
    await page.setInputFiles('#file-input', {
      name: 'first.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from('a,b\n1,x\n2,y\n'),
    });
    await page.locator('#profiles .file-profile').waitFor({ timeout: 60_000 });
    expect(profileRequests()).toBe(1);
    fakeModel.enqueue(text('<Answer>Two rows.</Answer>'));
    await ask(watch, 'How many rows?');
    await expect.poll(() => turnStatus(watch, 1), { timeout: 60_000 }).toMatch(/^answered/);

    await page.setInputFiles('#file-input', {
      name: 'second.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from('city,people\nLyon,522\nNantes,320\n'),
    });
    await expect
      .poll(() => page.locator('#file-list').textContent())
      .toContain('added with your next question');
    fakeModel.enqueue(text('<Answer>Two files now.</Answer>'));
    await ask(watch, 'And with the second file?');
    // Fetched again for the thread's files, now both, and shown in place of the first.
    await expect.poll(() => profileRequests(), { timeout: 60_000 }).toBe(2);
    await expect.poll(() => page.locator('#profiles .file-profile').count(), { timeout: 60_000 }).toBe(2);
    expect(await page.locator('#profiles summary strong').allTextContents()).toEqual([
      'first.csv',
      'second.csv',
    ]);
    const second = page.locator('#profiles .file-profile').nth(1);
    expect(await second.locator('.first-rows tbody tr').first().locator('td').allTextContents()).toEqual([
      'Lyon',
      '522',
    ]);
    await expect.poll(() => turnStatus(watch, 2), { timeout: 60_000 }).toMatch(/^answered/);
    expect(await page.locator('#file-list').textContent()).not.toContain('added with your next question');
    expectInert(watch, server.url);
    await page.context().close();
  });

  it('a file that cannot be read: the status line says so, and the turn ends "no data" in the warning colour, not as an answer', async () => {
    const watch = await openUi(browser, `${server.url}/`);
    const { page } = watch;
    // Noise with NUL bytes under a .csv name: no encoding makes text of it.
    let seed = 11;
    const noise = Buffer.from(
      Array.from({ length: 1000 }, () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) >> 23),
    );
    await page.setInputFiles('#file-input', { name: 'bin.csv', mimeType: 'text/csv', buffer: noise });
    await expect
      .poll(() => page.locator('#status').textContent(), { timeout: 60_000 })
      .toBe(
        'None of your files could be read: the reasons are under Files. Add a CSV, Excel, JSON or SQLite file.',
      );
    expect(await page.locator('#profiles .file-profile .error').textContent()).toBe(
      'Binary data, not text (it holds NUL bytes and decodes in no text encoding)',
    );
    await ask(watch, 'Generate a data science report.');
    await expect.poll(() => turnStatus(watch, 1), { timeout: 60_000 }).toMatch(/^no data — /);
    const turn = page.locator('article.turn[data-turn="1"]');
    expect(await turn.getAttribute('class')).toContain('turn-no-data');
    // Not the green of an answer.
    const colours = await turn.locator('.turn-status').evaluate((element) => {
      const probe = document.createElement('span');
      probe.style.color = 'var(--ok)';
      element.append(probe);
      const ok = getComputedStyle(probe).color;
      probe.remove();
      return { status: getComputedStyle(element).color, ok };
    });
    expect(colours.status).not.toBe(colours.ok);
    expect(await page.locator('#status').textContent()).toBe('Question 1: no data.');
    expectInert(watch, server.url);
    await page.context().close();
  });

  it('the XSS payloads in a file name, column names, data values and model text stay text', async () => {
    const watch = await openUi(browser, `${server.url}/`);
    const { page } = watch;
    const header = payloads.slice(0, 3).map(csvField).join(',');
    // Short payloads too: the profile's first rows clip each cell to 40 characters in the sandbox.
    const shortPayloads = ['<img src=x onerror=alert(1)>', '<svg/onload=alert(2)>', '<b>bold</b>'];
    const rows = [
      payloads.slice(3, 6).map(csvField).join(','),
      ['1', '2', '3'].join(','),
      shortPayloads.map(csvField).join(','),
    ];
    const fileName = `<img src=x onerror="window.__xss = 'name'">.csv`;
    await page.setInputFiles('#file-input', {
      name: fileName,
      mimeType: 'text/csv',
      buffer: Buffer.from(`${header}\n${rows.join('\n')}\n`),
    });
    await page.getByText(fileName, { exact: true }).waitFor();
    // The profile before the question: the file name, the column names and the values, as text.
    await page.locator('#profiles .file-profile').waitFor({ timeout: 60_000 });
    const profileText = await page.locator('#profiles').textContent();
    expect(profileText).toContain(fileName);
    for (const payload of payloads.slice(0, 3)) expect(profileText).toContain(payload);
    expect(profileText).toContain(payloads[3]);
    // The first rows, a table of text: the header the column names, each cell the value clipped in the sandbox.
    const clip = (value: string) => (value.length <= 40 ? value : `${value.slice(0, 39)}…`);
    const firstRows = page.locator('#profiles .first-rows');
    expect(await firstRows.locator('caption').textContent()).toBe('First 3 rows');
    expect(await firstRows.locator('thead th').allTextContents()).toEqual(payloads.slice(0, 3));
    const cells = (row: number) => firstRows.locator('tbody tr').nth(row).locator('td').allTextContents();
    expect(await cells(0)).toEqual(payloads.slice(3, 6).map(clip));
    expect(await cells(1)).toEqual(['1', '2', '3']);
    expect(await cells(2)).toEqual(shortPayloads);
    expect(
      await page.locator('#profiles script, #profiles img, #profiles svg, #profiles a, #profiles b').count(),
    ).toBe(0);
    const hostile = payloads.join(' ');
    fakeModel.enqueue(
      code(
        [
          'import pandas as pd',
          'import glob',
          "frame = pd.read_csv(glob.glob('*.csv')[0])",
          `print(${JSON.stringify(hostile)})`,
          'frame',
        ].join('\n'),
        hostile,
      ),
      // A chart whose title and labels are the payloads: drawn by the server as an image.
      code(
        [
          "{'$schema': 'https://vega.github.io/schema/vega-lite/v5.json',",
          ` 'title': ${JSON.stringify(hostile)},`,
          ` 'data': {'values': [{'k': ${JSON.stringify(payloads[1])}, 'v': 3}, {'k': 'b', 'v': 5}]},`,
          " 'mark': 'bar', 'encoding': {'x': {'field': 'k', 'type': 'nominal'}, 'y': {'field': 'v', 'type': 'quantitative'}}}",
        ].join('\n'),
      ),
      // One whose data is remote: refused before anything is fetched, and the page says why, in text.
      code(
        [
          "{'$schema': 'https://vega.github.io/schema/vega-lite/v5.json',",
          ` 'title': ${JSON.stringify(hostile)},`,
          " 'data': {'url': 'https://tracker.example/data.csv'}, 'mark': 'point'}",
        ].join('\n'),
      ),
      text(`<Understand>${hostile}</Understand>\n<Answer>${hostile} and 12345.</Answer>`),
    );
    await ask(watch, hostile);
    await expect.poll(() => turnStatus(watch, 1), { timeout: 60_000 }).toMatch(/^answered/);
    const turn = page.locator('article.turn[data-turn="1"]');
    // Shown as text: in the question, the profile (name, columns, values), the steps, the output table and the answer.
    expect(await turn.locator('.question h3').textContent()).toBe(hostile);
    expect(await turn.locator('.step-profile').textContent()).toContain(fileName);
    expect(await turn.locator('.step-profile').textContent()).toContain(payloads[0]);
    expect(
      await turn.locator('.step-profile .first-rows tbody tr').nth(2).locator('td').allTextContents(),
    ).toEqual(shortPayloads);
    expect(await turn.locator('.step-analyze').first().textContent()).toContain(payloads[1]);
    expect(await turn.locator('.step-execution pre.stdout').first().textContent()).toContain(payloads[2]);
    expect(await turn.locator('.step-execution table').first().textContent()).toContain(payloads[4]);
    expect(await turn.locator('.step-answer').textContent()).toContain(payloads[5]);
    const chart = turn.locator('img.chart').first();
    await expect
      .poll(() => chart.evaluate((image) => (image as HTMLImageElement).naturalWidth), { timeout: 30_000 })
      .toBeGreaterThan(0);
    await expect
      .poll(() => turn.locator('.chart-figure .notice').allTextContents(), { timeout: 30_000 })
      .toEqual([
        expect.stringMatching(
          /^Chart 1 of output E\d+: The chart could not be drawn: The chart loads its data from "https:\/\/tracker\.example\/data\.csv".* nothing is fetched/,
        ),
      ]);
    expect(await page.evaluate(() => (window as { __xss?: unknown }).__xss)).toBeUndefined();
    // No element of the payloads came alive.
    expect(await page.locator('main script, main iframe, main svg').count()).toBe(0);
    const images = await page
      .locator('img')
      .evaluateAll((items) => items.map((item) => item.getAttribute('src')));
    expect(
      images.filter(
        (src) =>
          !/^(?:data:image\/png;base64,|\/v1\/threads\/[^/]+\/turns\/1\/(?:charts\/chart-\d+-1|figures\/E\d+--figure-\d+-\d+)$)/.test(
            src ?? '',
          ),
      ),
    ).toEqual([]);
    const hrefs = await page
      .locator('main a')
      .evaluateAll((items) => items.map((item) => item.getAttribute('href')));
    expect(hrefs.filter((href) => !/^(?:#out-E\d+|\/v1\/)/.test(href ?? ''))).toEqual([]);
    expectInert(watch, server.url);
    await page.context().close();
  });
});
