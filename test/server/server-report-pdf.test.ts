import { afterEach, describe, expect, it } from 'vitest';
import {
  askOnNewThread,
  startTestServer,
  waitForTurnStatus,
  type TestServer,
} from './support/server-harness.ts';

describe('?format=pdf on a server without Chromium', () => {
  let server: TestServer | null = null;
  afterEach(async () => {
    await server?.close();
    server = null;
  });

  // `?format=pdf` answered 400 though the README said "PDF on request"; without Chromium it is a 501 that says so.
  it('is a 501 CHROMIUM_UNAVAILABLE with the fix, no host path in it; the other formats still answer', async () => {
    server = await startTestServer({ chromiumPath: '/nonexistent/datalyst-test/chromium' });
    const threadId = await askOnNewThread(server.url, 'What is the mean?');
    await waitForTurnStatus(server.url, threadId, 1, 'finished');
    const pdf = await fetch(`${server.url}/v1/threads/${threadId}/turns/1/report?format=pdf`);
    expect(pdf.status).toBe(501);
    expect(pdf.headers.get('content-disposition')).toBeNull();
    const body = await pdf.text();
    expect(JSON.parse(body)).toEqual({
      error: {
        type: 'server_error',
        code: 'CHROMIUM_UNAVAILABLE',
        message: 'This server cannot print PDF reports: its Chromium is missing or did not start.',
        fix: expect.stringContaining('DATALYST_CHROMIUM') as unknown,
      },
    });
    expect(body).not.toContain('/nonexistent');
    // The operator's log has the cause, path included.
    expect(server.logLines.join('\n')).toContain('/nonexistent/datalyst-test/chromium');
    const html = await fetch(`${server.url}/v1/threads/${threadId}/report?format=html`);
    expect(html.status).toBe(200);
    expect(await html.text()).toContain('What is the mean?');
  });
});
