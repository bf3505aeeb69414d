import { afterEach, describe, expect, it } from 'vitest';
import { DatalystError } from '../../src/errors/index.ts';
import { parsePublicUrl } from '../../src/server/index.ts';
import { startTestServer, type TestServer } from './support/server-harness.ts';

/** A completion through `headers`: the thread id and the URLs it hands back. */
async function complete(
  server: TestServer,
  headers: Record<string, string> = {},
): Promise<{ threadId: string; urls: string[]; eventsUrl: string }> {
  const response = await fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'x', messages: [{ role: 'user', content: 'please write the totals' }] }),
  });
  const completion = (await response.json()) as {
    choices: { message: { thread_id: string; files: { url: string }[] } }[];
  };
  const message = completion.choices[0]?.message;
  const threadId = message?.thread_id ?? '';
  const turn = (await (await fetch(`${server.url}/v1/threads/${threadId}/turns/1`, { headers })).json()) as {
    events_url: string;
  };
  return { threadId, urls: message?.files.map((file) => file.url) ?? [], eventsUrl: turn.events_url };
}

const apiKey = 'k'.repeat(40);

describe('the URLs in answers behind a TLS proxy', () => {
  let server: TestServer | null = null;
  afterEach(async () => {
    await server?.close();
    server = null;
  });

  // File URLs were built from the request's scheme and Host: behind a TLS proxy, http:// links to its inside.
  it('start with --public-url (path kept) whatever the request said', async () => {
    server = await startTestServer({ publicUrl: 'https://data.example.com/datalyst/', apiKey });
    const { threadId, urls, eventsUrl } = await complete(server, { authorization: `Bearer ${apiKey}` });
    const base = `https://data.example.com/datalyst/v1/threads/${threadId}/turns/1`;
    expect(urls).toEqual([`${base}/artifacts/out.csv`, `${base}/report?format=html`]);
    expect(eventsUrl).toBe(`${base}/events`);
  });

  it('without it are the request’s own; X-Forwarded-Proto and -Host are not believed', async () => {
    server = await startTestServer();
    const { threadId, urls } = await complete(server, {
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'attacker.example',
    });
    expect(urls[0]).toBe(`${server.url}/v1/threads/${threadId}/turns/1/artifacts/out.csv`);
  });

  it('a public URL that cannot be a base of URLs is a CONFIG_INVALID before the server starts', async () => {
    expect(parsePublicUrl('http://127.0.0.1:8200/')).toBe('http://127.0.0.1:8200');
    expect(parsePublicUrl('https://Data.Example.com:443/a/b//')).toBe('https://data.example.com/a/b');
    for (const bad of [
      'data.example.com',
      'ftp://data.example.com',
      'https://user:secret@data.example.com',
      'https://data.example.com/?a=1',
      'https://data.example.com/#top',
    ]) {
      let thrown: unknown = null;
      try {
        parsePublicUrl(bad);
      } catch (error) {
        thrown = error;
      }
      expect(DatalystError.isInstance(thrown) && thrown.code, bad).toBe('CONFIG_INVALID');
    }
    await expect(startTestServer({ publicUrl: 'ftp://data.example.com' })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
    });
  });

  // A public URL says clients reach the server from elsewhere, through a proxy: one that sends the upstream's
  // own Host (nginx's default, 127.0.0.1:<port>) and no Origin passed the keyless browser guard, so
  // `serve --public-url https://…` without a key (the help's own example) served every file to anyone.
  it('off loopback without an API key is refused before the server starts (CONFIG_INVALID)', async () => {
    await expect(startTestServer({ publicUrl: 'https://data.example.com' })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringContaining('API key') as unknown,
    });
    // A loopback public URL (a proxy on this machine, under a path) needs none.
    for (const publicUrl of [
      'http://127.0.0.1:8300/datalyst',
      'http://localhost:8300',
      'http://[::1]:8300',
    ]) {
      server = await startTestServer({ publicUrl });
      expect((await fetch(`${server.url}/v1/files`)).status).toBe(200);
      await server.close();
      server = null;
    }
  });
});
