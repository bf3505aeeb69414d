import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerWebUi, webContentSecurityPolicy, webDistDir } from '../../src/server/web-ui.ts';
import { startTestServer, type TestServer } from '../server/support/server-harness.ts';

describe('datalyst serve serves the built web UI at /', () => {
  let server: TestServer;

  beforeAll(async () => {
    // scripts/setup.sh builds web/dist (npm run build:web by hand).
    expect(
      existsSync(path.join(webDistDir, 'index.html')),
      'web/dist is not built: run scripts/setup.sh',
    ).toBe(true);
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('sends index.html and its assets under the strict policy, with nosniff', async () => {
    const index = await fetch(`${server.url}/`);
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toMatch(/^text\/html/);
    expect(index.headers.get('content-security-policy')).toBe(webContentSecurityPolicy);
    expect(index.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await index.text();
    const scripts = Array.from(html.matchAll(/<script\b[^>]*\bsrc="([^"]+)"/g), (match) => match[1] ?? '');
    expect(scripts).toHaveLength(1);
    expect(scripts[0]).toMatch(/^\/assets\/[\w-]+\.js$/);
    const script = await fetch(`${server.url}${scripts[0]}`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/javascript/);
    expect(script.headers.get('content-security-policy')).toBe(webContentSecurityPolicy);
    // Nothing remote in what the page loads.
    for (const file of await readdir(path.join(webDistDir, 'assets'))) {
      const body = await (await fetch(`${server.url}/assets/${file}`)).text();
      expect(body).not.toMatch(/\b(?:src|href)\s*=\s*["']?https?:/);
      expect(body).not.toMatch(/@import\s+url\(\s*["']?https?:/);
    }
  });

  it('the policy allows nothing inline, eval, remote or framed', () => {
    expect(webContentSecurityPolicy).toContain("default-src 'none'");
    expect(webContentSecurityPolicy).toContain("script-src 'self'");
    expect(webContentSecurityPolicy).not.toMatch(/unsafe-|https?:|\*/);
    expect(webContentSecurityPolicy).toContain("frame-ancestors 'none'");
  });

  it('keeps its build stamp (a dotfile) and the API apart: no dotfiles, API 404s stay JSON', async () => {
    const stamp = await fetch(`${server.url}/.datalyst-source-hash`);
    expect([403, 404]).toContain(stamp.status);
    const unknown = await fetch(`${server.url}/v1/no-such-route`);
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');
    const traversal = await fetch(`${server.url}/assets/..%2f..%2fpackage.json`);
    expect([403, 404]).toContain(traversal.status);
    expect(await traversal.text()).not.toContain('"name": "datalyst"');
  });

  it('a chart of an unknown thread or with a bad id is refused', async () => {
    const missing = await fetch(
      `${server.url}/v1/threads/thread-000000000000000000000000/turns/1/charts/chart-1-1`,
    );
    expect(missing.status).toBe(404);
    const bad = await fetch(`${server.url}/v1/threads/x/turns/1/charts/${encodeURIComponent('<svg>')}`);
    expect(bad.status).toBe(400);
  });

  it('serves nothing at / when the UI was not built', async () => {
    const app = Fastify();
    expect(await registerWebUi(app, path.join(os.tmpdir(), 'datalyst-no-such-web-dist'))).toBe(false);
    expect((await app.inject({ url: '/' })).statusCode).toBe(404);
    await app.close();
  });
});
