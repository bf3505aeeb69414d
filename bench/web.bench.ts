// npm run bench:web — how long the web UI takes to draw a long thread.
//
// A scripted model (test/support/fake-openai-server.ts) runs a 30-round turn
// on the real Docker sandbox through `datalyst serve`: 20 cells each draw a
// matplotlib figure and display a vega-lite chart, 10 print a table-like
// text, then it answers. Chromium then opens the UI on that thread, which
// replays the turn's events from the server and draws every step.
// Measured in the page: from the `load` event to the turn drawn finished
// (every figure and chart decoded), each load in a fresh browser context
// (no browser cache). Cold: the first load right after the turn ended, and
// the first load after the server was stopped and started again on the same
// data folder (nothing in its memory). Warm: the loads after those.
// Baseline, same run, alternating (A B B A …): the empty UI from `load` to
// its thread list drawn. Also printed: charts the chart workers drew while
// the UI loaded (the server draws them as the cells display them, into the
// run folder, so a view should draw none).
// Goal: the thread draws in ≤ 1 s after load. Prints one JSON document.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createOpenAIChatModel } from '../src/index.ts';
import { sharedChartPool } from '../src/report/index.ts';
import { startServer, type DatalystServer } from '../src/server/index.ts';
import { startFakeOpenAIServer } from '../test/support/fake-openai-server.ts';

const ROUNDS = 30;
const CHARTS = 20;
const REPEATS = Number(process.env.BENCH_REPEATS ?? 5);
const COLD_RESTARTS = 3;

const text = (body: string) => ({ type: 'text' as const, text: body });
const cell = (round: number): string =>
  round <= CHARTS
    ? [
        'import matplotlib.pyplot as plt',
        `values = [((i * ${round}) % 17) for i in range(40)]`,
        'fig, ax = plt.subplots(figsize=(6, 3))',
        `ax.plot(values); ax.set_title('Series ${round}')`,
        "print('mean', round(sum(values) / len(values), 3))",
        `{'$schema': 'https://vega.github.io/schema/vega-lite/v5.json', 'data': {'values': [{'x': i, 'y': v} for i, v in enumerate(values)]}, 'mark': 'line', 'encoding': {'x': {'field': 'x', 'type': 'quantitative'}, 'y': {'field': 'y', 'type': 'quantitative'}}}`,
      ].join('\n')
    : `for i in range(20):\n    print('row', ${round}, i, i * ${round} / 7)`;

let lastPage: Page | null = null;

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

/** Milliseconds from the page's `load` event until `ready` holds in the page. */
async function timeAfterLoad(browser: Browser, url: string, ready: () => boolean): Promise<number> {
  // A fresh context each time: nothing from the browser's cache (charts are drawn by the server again).
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(url, { waitUntil: 'load' });
  await page.waitForFunction(ready, undefined, { polling: 'raf', timeout: 60_000 });
  lastPage
    ?.context()
    .close()
    .catch(() => undefined);
  lastPage = page;
  return page.evaluate(() => {
    const navigation = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
    return performance.now() - navigation.loadEventEnd;
  });
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-bench-web-'));
  const fakeModel = await startFakeOpenAIServer();
  const start = (): Promise<DatalystServer> =>
    startServer({
      dataDir,
      port: 0,
      modelId: 'gpt-bench',
      engine: {
        createModel: () => createOpenAIChatModel({ baseUrl: fakeModel.baseUrl, model: 'gpt-bench' }),
        profile: 'chat',
      },
      maxConcurrentTurns: 1,
    });
  let server = await start();
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  try {
    for (let round = 1; round < ROUNDS; round++) {
      fakeModel.enqueue(
        text(`<Analyze>Step ${round}.</Analyze>\n<Code>\n\`\`\`python\n${cell(round)}\n\`\`\`\n</Code>`),
      );
    }
    fakeModel.enqueue(text('<Answer>Twenty series drawn; the first mean is 8.0.</Answer>'));
    const form = new FormData();
    form.append('purpose', 'assistants');
    form.append('file', new Blob(['x,y\n1,2\n']), 'small.csv');
    const file = (await (await fetch(`${server.url}/v1/files`, { method: 'POST', body: form })).json()) as {
      id: string;
    };
    const post = (url: string, body: unknown) =>
      fetch(`${server.url}${url}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then((response) => response.json() as Promise<Record<string, unknown>>);
    const thread = await post('/v1/threads', { file_ids: [file.id] });
    const threadId = String(thread.id);
    const started = performance.now();
    await post(`/v1/threads/${threadId}/turns`, { question: 'Draw the twenty series.' });
    const sse = await (await fetch(`${server.url}/v1/threads/${threadId}/turns/1/events`)).text(); // until turn-done
    // What the UI downloads to draw the turn: the SSE replay, most of it the figures' base64 PNGs.
    const figureBase64Bytes = Array.from(
      sse.matchAll(/"dataBase64":"([^"]*)"/g),
      (m) => m[1]?.length ?? 0,
    ).reduce((sum, bytes) => sum + bytes, 0);
    const turnSeconds = (performance.now() - started) / 1000;
    const turn = (await (await fetch(`${server.url}/v1/threads/${threadId}/turns/1`)).json()) as {
      status: string;
      rounds: number;
    };

    // Functions, not strings: the UI's CSP has no 'unsafe-eval'.
    const threadReady = () =>
      document.querySelector('article.turn.turn-finished') !== null &&
      document.querySelectorAll('img.chart').length === 20 &&
      Array.from(document.querySelectorAll('figure img')).every(
        (img) => img instanceof HTMLImageElement && img.complete && img.naturalWidth > 0,
      );
    const emptyReady = () => document.querySelector('#thread-list li') !== null;
    const drawnBefore = sharedChartPool().stats.drawn;
    const coldAfterTurn = await timeAfterLoad(browser, `${server.url}/#thread=${threadId}`, threadReady);
    // A new server on the same data folder: nothing of the thread in its memory (three times: one load is noise on a shared machine).
    const coldAfterRestart: number[] = [];
    for (let restart = 0; restart < COLD_RESTARTS; restart++) {
      await server.close();
      server = await start();
      coldAfterRestart.push(await timeAfterLoad(browser, `${server.url}/#thread=${threadId}`, threadReady));
    }
    const baseline: number[] = [];
    const thread30: number[] = [];
    for (let repeat = 0; repeat < REPEATS; repeat++) {
      const order = repeat % 2 === 0 ? ['baseline', 'thread'] : ['thread', 'baseline'];
      for (const which of order) {
        if (which === 'baseline') baseline.push(await timeAfterLoad(browser, `${server.url}/`, emptyReady));
        else thread30.push(await timeAfterLoad(browser, `${server.url}/#thread=${threadId}`, threadReady));
      }
    }
    const chartsDrawnDuringViews = sharedChartPool().stats.drawn - drawnBefore;
    const drawn = await (lastPage as Page | null)!.evaluate(() => ({
      steps: document.querySelectorAll('ol.steps > li').length,
      outputs: document.querySelectorAll('.step-execution').length,
      figures: document.querySelectorAll('figure img:not(.chart)').length,
      charts: document.querySelectorAll('img.chart').length,
      answers: document.querySelectorAll('.step-answer').length,
    }));
    const result = {
      bench: 'web',
      turn: { status: turn.status, rounds: turn.rounds, seconds: Math.round(turnSeconds * 10) / 10 },
      drawn,
      repeats: REPEATS,
      msAfterLoad: {
        coldFirstLoadAfterTurn: Math.round(coldAfterTurn),
        coldFirstLoadAfterServerRestart: {
          median: Math.round(median(coldAfterRestart)),
          all: coldAfterRestart.map(Math.round),
        },
        baselineEmptyUi: { median: Math.round(median(baseline)), all: baseline.map(Math.round) },
        warmThread30Rounds20Charts: { median: Math.round(median(thread30)), all: thread30.map(Math.round) },
      },
      chartsDrawnDuringViews,
      sseBytes: { total: sse.length, figuresBase64: figureBase64Bytes },
      ratioWarmThreadToBaseline: Math.round((median(thread30) / median(baseline)) * 10) / 10,
      goal: 'thread drawn ≤ 1000 ms after load: cold after the turn, cold after a restart (median), warm (median)',
      goalMet: Math.max(coldAfterTurn, median(coldAfterRestart), median(thread30)) <= 1000,
    };
    console.log(JSON.stringify(result, null, 2));
  } finally {
    await browser.close();
    await server.close();
    await fakeModel.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
