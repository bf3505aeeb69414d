import { createReadStream } from 'node:fs';
import { readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { createThreadRequestSchema, createTurnRequestSchema, reportFormatSchema } from '../api-schemas.ts';
import { DatalystError } from '../../errors/index.ts';
import { artifactNotFound, badRequest, notFound, ServerRequestError } from '../http-error.ts';
import { reportContentSecurityPolicy } from '../../report/index.ts';
import { reportContentType, reportFileName } from '../report-cache.ts';
import { selfContainedMarkdown } from '../markdown-download.ts';
import { reportTraceTurn } from '../report-turn.ts';
import { baseUrlOf, parseWith, type RouteContext } from '../route-context.ts';
import { resolveInside } from '../safe-name.ts';
import { SseWriter } from '../sse.ts';
import { turnEventJson } from '../turn-log.ts';
import type { ThreadService } from '../thread-service.ts';
import type { ThreadRecord, TurnRecord } from '../thread-store.ts';
import { threadView, turnView } from '../views.ts';
import { contentDisposition } from './files.ts';

const threadParams = z.object({ threadId: z.string().max(64) });
const turnParams = z.object({
  threadId: z.string().max(64),
  index: z.coerce.number().int().positive().max(1e6),
});
const artifactParams = turnParams.extend({ '*': z.string() });
const eventsQuery = z.object({ after: z.coerce.number().int().nonnegative().optional() });
const reportQuery = z.object({ format: reportFormatSchema.default('html') });

/** Datalyst's own calls: threads, turns with their events as SSE, cancel, reports and artifacts. */
export function registerThreadRoutes(app: FastifyInstance, context: RouteContext): void {
  const { threads } = context;

  const view = async (request: FastifyRequest, record: ThreadRecord, turns: readonly TurnRecord[]) => {
    const files = (await Promise.all(record.file_ids.map((id) => context.files.get(id)))).filter(
      (file) => file !== null,
    );
    return threadView(baseUrlOf(request, context), record, turns, files, threads.sandboxOpen(record.id));
  };

  app.post('/v1/threads', async (request, reply) => {
    const body = parseWith(createThreadRequestSchema, request.body ?? {}, 'request body');
    const record = await threads.create(body.file_ids);
    return reply.code(201).send(await view(request, record, []));
  });

  app.get('/v1/threads', async (request) => ({
    object: 'list' as const,
    data: await Promise.all((await threads.list()).map(({ record, turns }) => view(request, record, turns))),
  }));

  app.get('/v1/threads/:threadId', async (request) => {
    const { threadId } = parseWith(threadParams, request.params, 'path');
    const { record, turns } = await threads.get(threadId);
    return view(request, record, turns);
  });

  app.delete('/v1/threads/:threadId', async (request) => {
    const { threadId } = parseWith(threadParams, request.params, 'path');
    await threads.delete(threadId);
    // A report of the thread still being written (a PDF prints for up to 2 minutes) recreates the folder as
    // it writes, out of the API's reach: removed again once it is done.
    const threadDir = threads.store.threadDir(threadId);
    void context.reports
      .settled(threads.store.runDir(threadId))
      .then(() => rm(threadDir, { recursive: true, force: true }))
      .catch((error: unknown) => request.log.error({ err: error, threadId }, 'deleted thread not removed'));
    return { id: threadId, object: 'thread' as const, deleted: true as const };
  });

  app.post('/v1/threads/:threadId/turns', async (request, reply) => {
    const { threadId } = parseWith(threadParams, request.params, 'path');
    const body = parseWith(createTurnRequestSchema, request.body, 'request body');
    const turn = await threads.startTurn(threadId, body.question, body.file_ids);
    return reply.code(202).send(turnView(baseUrlOf(request, context), threadId, turn.record));
  });

  app.get('/v1/threads/:threadId/turns/:index', async (request) => {
    const { threadId, index } = parseWith(turnParams, request.params, 'path');
    return turnView(baseUrlOf(request, context), threadId, await findTurn(threads, threadId, index));
  });

  app.get('/v1/threads/:threadId/turns/:index/events', async (request, reply) => {
    const { threadId, index } = parseWith(turnParams, request.params, 'path');
    const { after } = parseWith(eventsQuery, request.query, 'query');
    await findTurn(threads, threadId, index);
    const lastEventId = request.headers['last-event-id'];
    const afterSeq =
      typeof lastEventId === 'string' && /^\d+$/.test(lastEventId) ? Number(lastEventId) : (after ?? 0);
    await streamTurnEvents(threads, threadId, index, afterSeq, request, reply);
  });

  app.post('/v1/threads/:threadId/turns/:index/cancel', async (request) => {
    const { threadId, index } = parseWith(turnParams, request.params, 'path');
    await findTurn(threads, threadId, index);
    const cancelled = threads.cancel(threadId, index);
    const live = threads.liveTurn(threadId, index);
    const record = live === null ? await findTurn(threads, threadId, index) : await live.done;
    return { ...turnView(baseUrlOf(request, context), threadId, record), cancelled };
  });

  app.get('/v1/threads/:threadId/turns/:index/report', async (request, reply) => {
    const { threadId, index } = parseWith(turnParams, request.params, 'path');
    const { format } = parseWith(reportQuery, request.query, 'query');
    const { turns } = await threads.get(threadId);
    await sendReport(context, threadId, turns, turnOf(turns, threadId, index), format, reply);
  });

  /** The report of the thread's latest turn that has ended (the thread as it stood then). */
  app.get('/v1/threads/:threadId/report', async (request, reply) => {
    const { threadId } = parseWith(threadParams, request.params, 'path');
    const { format } = parseWith(reportQuery, request.query, 'query');
    const { turns } = await threads.get(threadId);
    const turn = turns.filter((candidate) => candidate.ended_at !== null).at(-1);
    if (turn === undefined) {
      throw new ServerRequestError(404, 'NO_REPORT', `Thread ${threadId} has no turn that has ended yet.`, {
        fix: 'Ask a question and let it end (follow its events until `turn-end`), then ask for the report.',
      });
    }
    await sendReport(context, threadId, turns, turn, format, reply);
  });

  app.get('/v1/threads/:threadId/turns/:index/artifacts/*', async (request, reply) => {
    const params = parseWith(artifactParams, request.params, 'path');
    await findTurn(threads, params.threadId, params.index);
    const root = path.join(threads.store.runDir(params.threadId), 'artifacts');
    const file = resolveInside(root, params['*']);
    if (file === null) {
      throw badRequest(
        'The artifact path leaves the artifacts folder.',
        "Use a path from the turn's `artifacts` list.",
      );
    }
    const stats = await stat(file).catch(() => null);
    if (stats === null || !stats.isFile()) throw artifactNotFound(params['*']);
    return reply
      .header('content-type', 'application/octet-stream')
      .header('content-disposition', contentDisposition(path.basename(file)))
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', 'sandbox')
      .send(createReadStream(file));
  });
}

async function findTurn(threads: ThreadService, threadId: string, index: number): Promise<TurnRecord> {
  return turnOf((await threads.get(threadId)).turns, threadId, index);
}

function turnOf(turns: readonly TurnRecord[], threadId: string, index: number): TurnRecord {
  const turn = turns.find((candidate) => candidate.index === index);
  if (turn === undefined) throw notFound('turn', `${threadId}/${index}`);
  return turn;
}

async function sendReport(
  context: RouteContext,
  threadId: string,
  turns: readonly TurnRecord[],
  turn: TurnRecord,
  format: z.infer<typeof reportFormatSchema>,
  reply: FastifyReply,
): Promise<void> {
  if (turn.ended_at === null) {
    throw new ServerRequestError(409, 'TURN_RUNNING', `Turn ${turn.index} has not ended yet.`, {
      fix: 'Follow its events until `turn-end`, then ask for the report.',
    });
  }
  const runDir = context.threads.store.runDir(threadId);
  // Null too for a thread whose every turn ended before its analysis started (cancelled while queued): no trace yet.
  const traceTurn = await reportTraceTurn(context.threads, threadId, turns, turn.index);
  if (traceTurn === null) {
    throw new ServerRequestError(
      404,
      'NO_REPORT',
      `Thread ${threadId} had no analysis to report as of turn ${turn.index}.`,
      {
        fix: 'Ask a question and let it run; a turn cancelled before it started reports only the turns before it.',
      },
    );
  }
  // The thread as it stood when this turn ended: rendered once, kept, the same bytes after later turns.
  const outDir = path.join(runDir, 'reports', `turn-${traceTurn}`);
  const file = await context.reports.path({ runDir, outDir, traceTurn }, format).catch((error: unknown) => {
    throw DatalystError.isInstance(error) && error.code === 'CHROMIUM_UNAVAILABLE'
      ? pdfUnavailable(error)
      : error;
  });
  // Markdown is downloaded as one file: its images go inline (the assets folder stays on the server). The
  // artifacts are read from the run folder itself, not through the report folder's link to it.
  const body =
    format === 'md'
      ? await selfContainedMarkdown(
          { assets: path.join(outDir, 'assets'), artifacts: path.join(runDir, 'artifacts') },
          await readFile(file, 'utf8'),
        )
      : createReadStream(file);
  await reply
    .header('content-type', reportContentType[format])
    // A PDF is a download: browsers' PDF viewers do not open in a sandboxed document.
    .header(
      'content-disposition',
      format === 'pdf'
        ? contentDisposition(reportFileName(format))
        : contentDisposition(reportFileName(format)).replace('attachment', 'inline'),
    )
    .header('x-content-type-options', 'nosniff')
    // The report's own policy (no scripts, nothing fetched) plus a sandbox: it gets an opaque origin, never the API's.
    .header('content-security-policy', `${reportContentSecurityPolicy}; sandbox`)
    .send(body);
}

/** No PDF without Chromium: the server's lack, said without its paths (the log has the cause); the other formats work. */
function pdfUnavailable(cause: DatalystError): ServerRequestError {
  return new ServerRequestError(
    501,
    'CHROMIUM_UNAVAILABLE',
    'This server cannot print PDF reports: its Chromium is missing or did not start.',
    {
      fix: "Ask for format=html (print it from a browser) or md, ipynb, json; the server's operator can install Chromium or set DATALYST_CHROMIUM to a Chromium or Chrome binary.",
      fault: 'system',
      cause,
    },
  );
}

/** A turn's events as SSE (`id:` = seq), from `afterSeq` on, until `turn-end` or the client leaves. */
async function streamTurnEvents(
  threads: ThreadService,
  threadId: string,
  index: number,
  afterSeq: number,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  reply.hijack();
  const sse = new SseWriter(reply.raw);
  const gone = new AbortController();
  request.raw.socket.once('close', () => gone.abort());
  reply.raw.once('close', () => gone.abort());
  try {
    for await (const event of threads.events(threadId, index, afterSeq, gone.signal)) {
      if (sse.closed) break;
      sse.send(turnEventJson(event), event.seq);
    }
  } finally {
    sse.end();
  }
}
