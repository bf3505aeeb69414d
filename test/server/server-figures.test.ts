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

  // "Generate visualization charts" streamed "[1 figure captured for the report]", yet `files` held only the report.
  it("lists the figures a turn's cells displayed in a completion's files, downloadable by that name", async () => {
    const sandbox = createFakeSandbox({
      run: () => ({
        ...printed('cell-output 42\n'),
        figures: [1, 2].map((n) => ({
          id: `figure-1-${n}`,
          mimeType: 'image/png' as const,
          dataBase64: png.toString('base64'),
          widthPx: 1,
          heightPx: 1,
        })),
      }),
    });
    server = await startTestServer({ createSandbox: sandbox.factory });
    const ask = (body: object) =>
      fetch(`${server?.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'x', messages: [{ role: 'user', content: 'Draw it.' }], ...body }),
      });
    const completion = (await (await ask({})).json()) as {
      choices: { message: { files: { name: string; url: string }[]; thread_id: string } }[];
      generated_files: { name: string; url: string }[];
    };
    const message = completion.choices[0]?.message;
    const threadId = message?.thread_id ?? '';
    const turnUrl = `${server.url}/v1/threads/${threadId}/turns/1`;
    const figureFiles = [
      { name: 'E1-figure-1.png', url: `${turnUrl}/figures/E1-figure-1.png` },
      { name: 'E1-figure-2.png', url: `${turnUrl}/figures/E1-figure-2.png` },
    ];
    expect(message?.files.slice(0, 2)).toEqual(figureFiles);
    expect(completion.generated_files).toEqual(message?.files);
    for (const file of figureFiles) {
      const figure = await fetch(file.url);
      expect(figure.status).toBe(200);
      expect(figure.headers.get('content-type')).toBe('image/png');
      expect(figure.headers.get('x-content-type-options')).toBe('nosniff');
      expect(figure.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
      expect(figure.headers.get('content-disposition')).toBe(`inline; filename="${file.name}"`);
      expect(Buffer.from(await figure.arrayBuffer()).equals(png)).toBe(true);
    }

    // Streamed: the final chunk lists them too (turn 2 of the same thread: its own cell, E2).
    const streamed = await readSse(
      await ask({ stream: true, messages: [{ role: 'user', content: 'Again.', thread_id: threadId }] }),
    );
    const final = JSON.parse(streamed.events.at(-2)?.data ?? '{}') as {
      choices: { delta: { files: { name: string }[] } }[];
      generated_files: { name: string }[];
    };
    expect(final.choices[0]?.delta.files.map((file) => file.name).slice(0, 2)).toEqual([
      'E2-figure-1.png',
      'E2-figure-2.png',
    ]);
    expect(final.generated_files).toEqual(final.choices[0]?.delta.files);

    // A file name is looked up in that turn's events only; names are checked before anything is read.
    expect((await fetch(`${turnUrl}/figures/E2-figure-1.png`)).status).toBe(404);
    expect((await fetch(`${turnUrl}/figures/E1-figure-3.png`)).status).toBe(404);
    expect((await fetch(`${server.url}/v1/threads/${threadId}/turns/2/figures/E2-figure-1.png`)).status).toBe(
      200,
    );
    for (const bad of ['E1-figure-0.png', 'E1-figure-1.svg', 'E1-figure-1.png.html', '..%2FE1-figure-1.png'])
      expect((await fetch(`${turnUrl}/figures/${bad}`)).status).toBe(400);
  });
});
