import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReportCache } from '../../src/server/report-cache.ts';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../support/fake-openai-server.ts';
import { containersOwnedBy } from './support/docker-containers.ts';
import { multipartUpload, rawRequest } from './support/raw-http.ts';
import {
  answerReply as answer,
  codeReply as code,
  startScriptedDockerServer,
  waitForTurnStatus,
  type ScriptedDockerServer,
} from './support/server-harness.ts';

/**
 * `GET …/turns/{n}/report` served the thread's latest report whatever n was:
 * a saved link to turn 1's report changed meaning once turn 2 had run. Now a
 * turn's report is the thread as of that turn, rendered once and kept.
 */
const ordersCsv = path.resolve('workspace-examples/sales/orders.csv');
const json = { 'content-type': 'application/json' };

describe("a turn's report on the real sandbox is the thread as of that turn", () => {
  let model: FakeOpenAIServer;
  let scripted: ScriptedDockerServer;
  let dataDir: string;
  let threadId: string;

  beforeAll(async () => {
    // Ours, not the harness's: the data folder outlives the first server, for the restart.
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-turn-report-'));
    model = await startFakeOpenAIServer();
    scripted = await startScriptedDockerServer({ model, dataDir });
  });

  afterAll(async () => {
    await scripted?.close();
    await model?.close();
    await rm(dataDir, { recursive: true, force: true });
    expect(await containersOwnedBy(process.pid)).toEqual([]);
  });

  const ask = async (question: string): Promise<number> => {
    const turn = await rawRequest(
      scripted.url,
      'POST',
      `/v1/threads/${threadId}/turns`,
      json,
      JSON.stringify({ question }),
    );
    expect(turn.status, turn.body).toBe(202);
    const { index } = JSON.parse(turn.body) as { index: number };
    await waitForTurnStatus(scripted.url, threadId, index, 'finished');
    return index;
  };
  const report = (index: number, format = 'html') =>
    rawRequest(scripted.url, 'GET', `/v1/threads/${threadId}/turns/${index}/report?format=${format}`);

  it("turn 1's report, first asked for after turn 2, has turn 1 only; turn 2's has both; a restart renders neither again", async () => {
    const upload = multipartUpload('orders.csv', await readFile(ordersCsv, 'utf8'));
    const file = JSON.parse(
      (await rawRequest(scripted.url, 'POST', '/v1/files', upload.headers, upload.body)).body,
    ) as { id: string };
    threadId = (
      JSON.parse(
        (await rawRequest(scripted.url, 'POST', '/v1/threads', json, JSON.stringify({ file_ids: [file.id] })))
          .body,
      ) as { id: string }
    ).id;

    model.enqueue(
      code(
        [
          'import pandas as pd, altair as alt, matplotlib',
          "matplotlib.use('Agg')",
          'import matplotlib.pyplot as plt',
          "orders = pd.read_csv('orders.csv')",
          "units = orders.groupby('region', as_index=False)['units'].sum()",
          "units.plot.bar(x='region', y='units').figure.savefig('units_by_region.png')",
          "plt.close('all')",
          'print(units)',
          "alt.Chart(units).mark_bar().encode(x='region', y='units')",
        ].join('\n'),
      ),
      answer('Answer one: the units by region are printed above.'),
    );
    await ask('Question one: how many units does each region sell?');
    model.enqueue(
      code("print(orders['revenue'].sum())"),
      answer('Answer two: the revenue total is printed above.'),
    );
    await ask('Question two: what is the total revenue?');

    // Turn 1's report, asked for the first time now that turn 2 has ended.
    const first = await report(1);
    expect(first.status).toBe(200);
    expect(first.body).toContain('Question one');
    expect(first.body).toContain('Answer one');
    expect(first.body).not.toContain('Question two');
    expect(first.body).not.toContain('Answer two');
    // The Markdown, as one file: the image the code saved is inline (read through the run folder's artifacts).
    const markdown = await report(1, 'md');
    expect(markdown.body).toContain('Question one');
    expect(markdown.body).not.toContain('Question two');
    expect(markdown.body).toMatch(/!\[units\\_by\\_region\.png\]\(data:image\/png;base64,/);
    expect(markdown.body).not.toMatch(/!\[[^\]]*\]\((assets|artifacts)\//);
    const runDir = scripted.server.threads.store.runDir(threadId);
    const turnOneDir = path.join(runDir, 'reports', 'turn-1');
    // The report folder's own Markdown links the image: the render saw it through the link to the artifacts.
    expect(await readFile(path.join(turnOneDir, 'report.md'), 'utf8')).toContain(
      '![units\\_by\\_region.png](artifacts/units_by_region.png)',
    );

    // Turn 2's report: the thread as of turn 2, both questions; its chart is the one the server drew.
    const reports = new ReportCache();
    const turnTwo = { runDir, outDir: path.join(runDir, 'reports', 'turn-2'), traceTurn: 2 };
    const turnTwoHtml = await readFile(await reports.path(turnTwo, 'html'), 'utf8');
    expect(reports.chartStats.drawn).toBe(0);
    expect(reports.chartStats.reused).toBeGreaterThan(0);
    const second = await report(2);
    expect(second.body).toBe(turnTwoHtml);
    expect(second.body).toContain('Question one');
    expect(second.body).toContain('Question two');
    expect(second.body).toContain('Answer two');
    expect(second.body).toContain('<svg');

    // The same bytes again, from a new cache (nothing rendered) and from a restarted server.
    const written = await stat(path.join(turnOneDir, 'report.html'));
    const fresh = new ReportCache();
    expect(
      await readFile(await fresh.path({ runDir, outDir: turnOneDir, traceTurn: 1 }, 'html'), 'utf8'),
    ).toBe(first.body);
    expect(fresh.chartStats).toEqual({ drawn: 0, reused: 0, rasterized: 0 });
    await scripted.close();
    scripted = await startScriptedDockerServer({ model, dataDir });
    const again = await report(1);
    expect(again.status).toBe(200);
    expect(again.body).toBe(first.body);
    expect((await stat(path.join(turnOneDir, 'report.html'))).mtimeMs).toBe(written.mtimeMs);
  });
});
