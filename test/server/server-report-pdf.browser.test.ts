import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DatalystError } from '../../src/errors/index.ts';
import { ReportCache } from '../../src/server/report-cache.ts';
import {
  askOnNewThread,
  startTestServer,
  waitForTurnStatus,
  type TestServer,
} from './support/server-harness.ts';

describe('?format=pdf: the report printed by Chromium on the server', () => {
  let server: TestServer | null = null;
  afterEach(async () => {
    await server?.close();
    server = null;
  });

  // It answered 400 though the README said "PDF on request".
  it('is a PDF download of the turn, printed once and kept', async () => {
    server = await startTestServer();
    const threadId = await askOnNewThread(server.url, 'What is the mean?');
    await waitForTurnStatus(server.url, threadId, 1, 'finished');
    const url = `${server.url}/v1/threads/${threadId}/turns/1/report?format=pdf`;
    // Two at once: one print.
    const [first, again] = await Promise.all([fetch(url), fetch(url)]);
    for (const response of [first, again]) {
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/pdf');
      expect(response.headers.get('content-disposition')).toMatch(/^attachment; filename="report\.pdf"/);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('content-security-policy')).toMatch(/; sandbox$/);
    }
    const bytes = Buffer.from(await first.arrayBuffer());
    expect(bytes.subarray(0, 5).toString()).toBe('%PDF-');
    expect(Buffer.from(await again.arrayBuffer()).equals(bytes)).toBe(true);
    expect(bytes.subarray(-8).toString()).toContain('%%EOF');
    // Kept: a later request sends the same file without printing again.
    const later = Buffer.from(await (await fetch(url)).arrayBuffer());
    expect(later.equals(bytes)).toBe(true);
  });

  // Prints waited without bound (a client asking for many turns' PDFs delayed everyone's). Found by a review.
  it('refuses a print past the ones that may wait (503 PDF_BUSY), and prints the others', async () => {
    server = await startTestServer();
    const threadId = await askOnNewThread(server.url, 'What is the mean?');
    await waitForTurnStatus(server.url, threadId, 1, 'finished');
    const runDir = server.server.threads.store.runDir(threadId);
    const reports = new ReportCache();
    const asked = Array.from({ length: ReportCache.maxWaitingPrints + 2 }, (_, copy) =>
      reports.path({ runDir, outDir: join(runDir, 'reports', `copy-${copy}`), traceTurn: 1 }, 'pdf').then(
        () => 'printed',
        (error: unknown) => (DatalystError.isInstance(error) ? error.code : String(error)),
      ),
    );
    const outcomes = await Promise.all(asked);
    expect(outcomes.filter((outcome) => outcome === 'printed').length).toBeGreaterThanOrEqual(1);
    expect(outcomes.filter((outcome) => outcome === 'PDF_BUSY').length).toBeGreaterThanOrEqual(1);
    expect(outcomes.every((outcome) => outcome === 'printed' || outcome === 'PDF_BUSY')).toBe(true);
  });
});
