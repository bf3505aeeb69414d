import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './support/server-harness.ts';

let current: TestServer | null = null;

afterEach(async () => {
  await current?.close();
  current = null;
});

/** Sends `head` and then nothing; resolves when the server closes the socket, or with 'open' after `waitMs`. */
function sendAndWait(
  url: string,
  head: string,
  waitMs: number,
): Promise<{ state: 'closed' | 'open'; got: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    let got = '';
    const socket = net.connect(Number(port), hostname, () => socket.write(head));
    socket.on('data', (data: Buffer) => (got += data.toString('latin1')));
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ state: 'open', got });
    }, waitMs);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ state: 'closed', got });
    });
  });
}

const key = 'a-test-key-that-is-long-enough';

describe('slow clients', () => {
  it('a client without the key cannot hold a connection open by announcing a body it never sends', async () => {
    const server = await startTestServer({ apiKey: key });
    current = server;
    const head =
      'POST /v1/files HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=x\r\n' +
      'Content-Length: 100000000\r\n\r\n--x\r\n';
    const outcome = await sendAndWait(server.url, head, 5_000);
    expect(outcome.got).toMatch(/^HTTP\/1\.1 401/);
    expect(outcome.state).toBe('closed');
  });

  it('a keyless request for the web UI or /health that announces a body is refused (400) and its connection closed', async () => {
    const server = await startTestServer({ apiKey: key });
    current = server;
    const heads = [
      'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000000\r\n\r\nabc',
      'HEAD /index.html HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\n',
      'GET /assets/app.js HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab',
      'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10\r\n\r\n',
    ];
    for (const head of heads) {
      const outcome = await sendAndWait(server.url, head, 5_000);
      expect(outcome.got, head).toMatch(/^HTTP\/1\.1 400/);
      expect(outcome.state, head).toBe('closed');
      if (!head.startsWith('HEAD')) expect(outcome.got).toContain('BODY_NOT_ALLOWED');
    }
    // Without a body (or with Content-Length: 0) the same requests pass the key check as before.
    for (const head of [
      'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n',
      'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n',
    ]) {
      const outcome = await sendAndWait(server.url, head, 5_000);
      expect(outcome.got, head).toMatch(/^HTTP\/1\.1 200/);
    }
    const page = await sendAndWait(
      server.url,
      'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n',
      5_000,
    );
    expect(page.got).not.toMatch(/^HTTP\/1\.1 (400|401)/);
  });

  it('a request body trickled for ever is bounded by a request timeout (Fastify turns off Node’s)', async () => {
    const server = await startTestServer({ apiKey: key });
    current = server;
    const { requestTimeout } = server.server.app.server;
    expect(requestTimeout).toBeGreaterThan(0);
    expect(requestTimeout).toBeLessThanOrEqual(30 * 60_000);
  });
});
