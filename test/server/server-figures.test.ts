import { afterEach, describe, expect, it } from 'vitest';
import { createFakeSandbox, printed } from '../agent/support/fake-session.ts';
import { readSse, startTestServer, type TestServer } from './support/server-harness.ts';

// A 1×1 PNG.
const png = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

describe("a cell's figures: files beside the event stream, not base64 in it", () => {
  let server: TestServer | null = null;
  afterEach(async () => {
    await server?.close();
    server = null;
  });

  it('names each figure in execution-end and serves its PNG at …/figures/{name}', async () => {
    const sandbox = createFakeSandbox({
      run: () => ({
        ...printed('cell-output 42\n'),
        figures: [
          {
            id: 'figure-1-1',
            mimeType: 'image/png',
            dataBase64: png.toString('base64'),
            widthPx: 1,
            heightPx: 1,
          },
        ],
      }),
    });
    server = await startTestServer({ createSandbox: sandbox.factory });
    const threadId = (
      (await (
        await fetch(`${server.url}/v1/threads`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ file_ids: [] }),
        })
      ).json()) as { id: string }
    ).id;
    await fetch(`${server.url}/v1/threads/${threadId}/turns`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ question: 'Draw it.' }),
    });
    const { events, raw } = await readSse(await fetch(`${server.url}/v1/threads/${threadId}/turns/1/events`));
    expect(raw).not.toContain(png.toString('base64'));
    const end = events
      .map((event) => JSON.parse(event.data) as { type: string; result?: { figures: unknown[] } })
      .find((event) => event.type === 'execution-end');
    expect(end?.result?.figures).toEqual([
      {
        id: 'figure-1-1',
        mimeType: 'image/png',
        dataBase64: '',
        widthPx: 1,
        heightPx: 1,
        name: 'E1--figure-1-1',
      },
    ]);
    const figure = await fetch(`${server.url}/v1/threads/${threadId}/turns/1/figures/E1--figure-1-1`);
    expect(figure.status).toBe(200);
    expect(figure.headers.get('content-type')).toBe('image/png');
    expect(figure.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Buffer.from(await figure.arrayBuffer()).equals(png)).toBe(true);
    // The report still has the figure (from the trace).
    const report = await (
      await fetch(`${server.url}/v1/threads/${threadId}/turns/1/report?format=html`)
    ).text();
    expect(report).toContain(png.toString('base64'));
    expect((await fetch(`${server.url}/v1/threads/${threadId}/turns/1/figures/E1--figure-9-9`)).status).toBe(
      404,
    );
    expect((await fetch(`${server.url}/v1/threads/${threadId}/turns/1/figures/..%2Ftrace`)).status).toBe(400);
    expect(
      (await fetch(`${server.url}/v1/threads/thread-000000000000000000000000/turns/1/figures/E1--figure-1-1`))
        .status,
    ).toBe(404);
  });
});
