import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { figureNamePattern, readStoredFigure } from '../figure-files.ts';
import { notFound } from '../http-error.ts';
import { parseWith, type RouteContext } from '../route-context.ts';

const figureParams = z.object({
  threadId: z.string().max(64),
  index: z.coerce.number().int().positive().max(1e6),
  name: z.string().max(130).regex(figureNamePattern),
});

/**
 * `GET /v1/threads/{id}/turns/{n}/figures/{name}`: a figure a cell drew
 * (matplotlib's PNG), named in its `execution-end` event (figure-files.ts),
 * for the web UI to load beside the event stream.
 */
export function registerFigureRoutes(app: FastifyInstance, context: RouteContext): void {
  app.get('/v1/threads/:threadId/turns/:index/figures/:name', async (request, reply) => {
    const { threadId, index, name } = parseWith(figureParams, request.params, 'path');
    const record = await context.threads.store.readThread(threadId);
    if (record === null) throw notFound('thread', threadId);
    const png = await readStoredFigure(context.threads.store.runDir(threadId), name);
    if (png === null) throw notFound('figure', `${threadId}/${index}/${name}`);
    return reply
      .header('content-type', 'image/png')
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', "default-src 'none'; sandbox")
      .header('cache-control', 'private, max-age=3600')
      .send(png);
  });
}
