import { readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { profileWorkspace } from '../../agent/index.ts';
import type { WorkspaceProfile } from '../../sandbox/index.ts';
import { threadProfileSchema, type ThreadProfile } from '../api-schemas.ts';
import { notFound } from '../http-error.ts';
import { parseWith, type RouteContext } from '../route-context.ts';
import type { EngineOptions } from '../thread-engine.ts';

const threadParams = z.object({ threadId: z.string().max(64) });

/** The cached profile of a thread's workspace, for the files it held when it was made. */
const cachedProfileSchema = threadProfileSchema.pick({ file_ids: true, profile: true });

/**
 * `GET /v1/threads/{id}/profile`: every file of the thread's workspace
 * profiled before the first question (sheets, columns with kinds, sample
 * values, reading notes), parsed in a sandbox of its own by the library's
 * `profileWorkspace`. Kept in the thread's folder for the files it was made
 * from: asked again with the same files, it is read back; with more files
 * (a turn added some), it is made again.
 */
export function registerThreadProfileRoutes(
  app: FastifyInstance,
  context: RouteContext,
  engine: EngineOptions,
): void {
  const { store } = context.threads;
  /** One profile at a time per thread and set of files: a second request waits for the first. */
  const running = new Map<string, Promise<WorkspaceProfile>>();
  /** Each profile is a sandbox (a container): at most this many at once, beside the turns; the others wait their turn. */
  const maxAtOnce = Math.max(1, os.availableParallelism());
  let active = 0;
  const waiting: (() => void)[] = [];
  const bounded = async <T>(work: () => Promise<T>): Promise<T> => {
    if (active >= maxAtOnce) await new Promise<void>((resolve) => waiting.push(resolve));
    active += 1;
    try {
      return await work();
    } finally {
      active -= 1;
      waiting.shift()?.();
    }
  };

  app.get('/v1/threads/:threadId/profile', async (request): Promise<ThreadProfile> => {
    const { threadId } = parseWith(threadParams, request.params, 'path');
    const record = await store.readThread(threadId);
    if (record === null) throw notFound('thread', threadId);
    const fileIds = [...record.file_ids];
    const cachePath = path.join(store.threadDir(threadId), 'profile.json');
    // Missing, cut short (the server stopped while writing it) or of another shape: profiled again.
    const cached = await readFile(cachePath, 'utf8').then(
      (text) => cachedProfileSchema.safeParse(parseJson(text)),
      () => null,
    );
    const view = (profile: WorkspaceProfile): ThreadProfile => ({
      object: 'thread.profile',
      thread_id: threadId,
      file_ids: fileIds,
      profile,
    });
    if (cached?.success === true && sameIds(cached.data.file_ids, fileIds)) return view(cached.data.profile);
    const key = `${threadId}\n${fileIds.join(',')}`;
    let profiling = running.get(key);
    if (profiling === undefined) {
      profiling = bounded(() =>
        profileWorkspace({
          workspaceDir: store.workspaceDir(threadId),
          ...(engine.createSandbox === undefined ? {} : { createSandbox: engine.createSandbox }),
          ...(engine.sandbox === undefined ? {} : { sandbox: engine.sandbox }),
        }),
      );
      running.set(key, profiling);
      void profiling
        .then((profile) =>
          // A thread deleted meanwhile has no folder: the profile is not kept, and that is no error.
          writeFile(cachePath, JSON.stringify({ file_ids: fileIds, profile })).catch(() => undefined),
        )
        .catch(() => undefined)
        .finally(() => running.delete(key));
    }
    return view(await profiling);
  });
}

const sameIds = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((id, index) => id === b[index]);

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
};
