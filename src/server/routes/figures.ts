import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import {
  figureFileNamePattern,
  figureNamePattern,
  readStoredFigure,
  storedFiguresOf,
} from '../figure-files.ts';
import { notFound } from '../http-error.ts';
import { parseWith, type RouteContext } from '../route-context.ts';
import type { ThreadService } from '../thread-service.ts';

const figureParams = z.object({
  threadId: z.string().max(64),
  index: z.coerce.number().int().positive().max(1e6),
  name: z.union([
    z.string().max(130).regex(figureNamePattern),
    z.string().max(140).regex(figureFileNamePattern),
  ]),
});

/**
 * `GET /v1/threads/{id}/turns/{n}/figures/{name}`: a figure a cell drew
 * (matplotlib's PNG), by the `name` its `execution-end` event gives it
 * (figure-files.ts), for the web UI to load beside the event stream, or by
 * its file name in a completion's `files` (`E7-figure-1.png`), looked up in
 * that turn's events. Always an inline PNG (`nosniff`, a sandboxing CSP).
 */
export function registerFigureRoutes(app: FastifyInstance, context: RouteContext): void {
  app.get('/v1/threads/:threadId/turns/:index/figures/:name', async (request, reply) => {
    const { threadId, index, name } = parseWith(figureParams, request.params, 'path');
    const record = await context.threads.store.readThread(threadId);
    if (record === null) throw notFound('thread', threadId);
    const isFileName = figureFileNamePattern.test(name);
    const stored = isFileName ? await storedNameOf(context.threads, threadId, index, name) : name;
    const png =
      stored === null ? null : await readStoredFigure(context.threads.store.runDir(threadId), stored);
    if (png === null) throw notFound('figure', `${threadId}/${index}/${name}`);
    if (isFileName) void reply.header('content-disposition', `inline; filename="${name}"`);
    return reply
      .header('content-type', 'image/png')
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', "default-src 'none'; sandbox")
      .header('cache-control', 'private, max-age=3600')
      .send(png);
  });
}

/** The stored name of the figure the turn's events list as `fileName`; null when they list none. */
async function storedNameOf(
  threads: ThreadService,
  threadId: string,
  index: number,
  fileName: string,
): Promise<string | null> {
  for await (const event of threads.eventsSoFar(threadId, index)) {
    const figure = storedFiguresOf(event).find((candidate) => candidate.fileName === fileName);
    if (figure !== undefined) return figure.name;
  }
  return null;
}
