import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { backgroundChartPool, sharedChartPool } from '../../src/report/index.ts';
import { rawRequest } from './support/raw-http.ts';
import {
  askOnNewThread,
  startTestServer,
  waitForTurnStatus,
  type TestServer,
} from './support/server-harness.ts';

/**
 * The server draws a cell's charts ahead of any view (for the web UI), but
 * only while a turn slot is free (spare-time.ts): while every slot is taken,
 * the turns keep the cores busy and the drawing waits.
 */
let server: TestServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

async function until(check: () => boolean, what: string): Promise<void> {
  for (let attempt = 0; attempt < 400; attempt += 1) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`never: ${what}`);
}

describe('charts drawn ahead of a view', () => {
  it('wait while every turn slot is taken and are drawn once one is free, not again for the view', async () => {
    server = await startTestServer({ maxConcurrentTurns: 1, maxQueuedTurns: 2 });
    const drawnBefore = {
      view: sharedChartPool().stats.drawn,
      background: backgroundChartPool().stats.drawn,
    };
    // The chart's turn holds the only slot; the slow turn waits for it and takes it as the chart's ends.
    const chartThread = await askOnNewThread(server.url, 'draw a chart');
    const slowThread = await askOnNewThread(server.url, 'slow');
    await waitForTurnStatus(server.url, chartThread, 1, 'finished');
    await waitForTurnStatus(server.url, slowThread, 1, 'running');
    const threads = server.server.threads;
    const chartCache = path.join(threads.store.runDir(chartThread), '.chart-cache');
    expect(threads.spareTasksWaiting).toBe(1);
    expect(backgroundChartPool().stats.drawn - drawnBefore.background).toBe(0);
    expect(existsSync(chartCache)).toBe(false);

    const cancel = await rawRequest(server.url, 'POST', `/v1/threads/${slowThread}/turns/1/cancel`);
    expect(cancel.status).toBe(200);
    // The slot is free: the chart is drawn in the background and kept in the thread's run folder.
    await until(() => threads.spareTasksWaiting === 0, 'the chart left the spare-time queue');
    await until(
      () => existsSync(chartCache) && readdirSync(chartCache).some((name) => name.endsWith('.json')),
      'the chart was kept in the run folder',
    );
    expect(backgroundChartPool().stats.drawn - drawnBefore.background).toBe(1);
    const chart = await fetch(`${server.url}/v1/threads/${chartThread}/turns/1/charts/chart-1`);
    expect(chart.status).toBe(200);
    expect(await chart.text()).toContain('<svg');
    expect(sharedChartPool().stats.drawn - drawnBefore.view).toBe(0);
  });

  it('a thread deleted while its chart waits is removed, and its chart is never drawn', async () => {
    server = await startTestServer({ maxConcurrentTurns: 1, maxQueuedTurns: 2 });
    const drawnBefore = backgroundChartPool().stats.drawn;
    const chartThread = await askOnNewThread(server.url, 'draw a chart');
    const slowThread = await askOnNewThread(server.url, 'slow');
    await waitForTurnStatus(server.url, chartThread, 1, 'finished');
    await waitForTurnStatus(server.url, slowThread, 1, 'running');
    expect(server.server.threads.spareTasksWaiting).toBe(1);
    expect((await rawRequest(server.url, 'DELETE', `/v1/threads/${chartThread}`)).status).toBe(200);
    expect(server.server.threads.spareTasksWaiting).toBe(0);
    expect((await rawRequest(server.url, 'POST', `/v1/threads/${slowThread}/turns/1/cancel`)).status).toBe(
      200,
    );
    await waitForTurnStatus(server.url, slowThread, 1, 'cancelled');
    expect(backgroundChartPool().stats.drawn - drawnBefore).toBe(0);
    expect(existsSync(path.join(server.dataDir, 'threads', chartThread))).toBe(false);
  });
});
