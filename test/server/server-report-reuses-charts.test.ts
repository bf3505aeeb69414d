import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { backgroundChartPool, sharedChartPool } from '../../src/report/index.ts';
import { ReportCache } from '../../src/server/report-cache.ts';
import {
  askOnNewThread,
  startTestServer,
  waitForTurnStatus,
  type TestServer,
} from './support/server-harness.ts';

/**
 * The server draws each chart as its cell displays it, into the run folder's
 * `.chart-cache/` (chart-drawings.ts). Its report drew every chart again, once
 * per format asked for; now it takes them from there.
 */

let current: TestServer[] = [];
afterEach(async () => {
  await Promise.all(current.map((server) => server.close()));
  current = [];
});

async function finishedChartTurn(server: TestServer): Promise<string> {
  const threadId = await askOnNewThread(server.url, 'draw a chart');
  await waitForTurnStatus(server.url, threadId, 1, 'finished');
  return threadId;
}

describe("the server's report after a turn", () => {
  it('draws no chart again: every format comes from the charts the server drew as the cell displayed them', async () => {
    const server = await startTestServer();
    current.push(server);
    const drawnBefore = {
      view: sharedChartPool().stats.drawn,
      background: backgroundChartPool().stats.drawn,
    };
    const threadId = await finishedChartTurn(server);
    // The web UI's view of the chart: drawn when the cell displayed it, read back from the run folder.
    const chart = await fetch(`${server.url}/v1/threads/${threadId}/turns/1/charts/chart-1`);
    expect(chart.status).toBe(200);
    // Drawn once, by the background pool (its workers give way to the kernels), not again for the view.
    expect(backgroundChartPool().stats.drawn - drawnBefore.background).toBe(1);
    expect(sharedChartPool().stats.drawn - drawnBefore.view).toBe(0);
    const runDir = server.server.threads.store.runDir(threadId);

    const reports = new ReportCache();
    const request = { runDir, outDir: join(runDir, 'reports', 'turn-1'), traceTurn: 1 };
    const html = await readFile(await reports.path(request, 'html'), 'utf8');
    expect(html).toContain('<svg');
    // HTML, Markdown, the notebook and the trace were written together, from one prepared report.
    const markdown = await readFile(await reports.path(request, 'md'), 'utf8');
    expect(markdown).toMatch(/!\[[^\]]*\]\(assets\/[^)]+\.png\)/);
    await reports.path(request, 'ipynb');
    await reports.path(request, 'json');
    // vega drew nothing; Markdown's PNG was rasterized from the kept SVG, once for all formats.
    expect(reports.chartStats).toEqual({ drawn: 0, reused: 1, rasterized: 1 });

    // Through the route as well (the server's own cache): the report is served as one file, its images inline
    // (a downloaded report.md has no assets folder beside it).
    const served = await fetch(`${server.url}/v1/threads/${threadId}/turns/1/report?format=md`);
    expect(served.status).toBe(200);
    const download = await served.text();
    expect(download).not.toMatch(/\]\(assets\//);
    const inline = /!\[[^\]]*\]\(data:image\/png;base64,([A-Za-z0-9+/=]+)\)/.exec(download)?.[1] ?? '';
    expect(Array.from(Buffer.from(inline, 'base64').subarray(0, 4))).toEqual([0x89, 0x50, 0x4e, 0x47]);
  });
});
