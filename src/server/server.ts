import os from 'node:os';
import multipart from '@fastify/multipart';
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import { DatalystError } from '../errors/index.ts';
import type { Health } from './api-schemas.ts';
import { DataQuota } from './data-quota.ts';
import { lockDataDir, type DataDirLock } from './data-dir-lock.ts';
import { checkListenSecurity, checkPublicUrlSecurity, createKeyCheck } from './auth.ts';
import { checkBrowserRequest } from './browser-guard.ts';
import { FileStore } from './file-store.ts';
import { checkListenAddress, listenErrorOf } from './listen-address.ts';
import { errorBody, fileLimitFix, ServerRequestError } from './http-error.ts';
import { buildOpenApiDocument } from './openapi.ts';
import { ReportCache } from './report-cache.ts';
import { serverLoggerOptions, type ServerLogOptions } from './server-log.ts';
import { parsePublicUrl, type RouteContext } from './route-context.ts';
import { registerChartRoutes } from './routes/charts.ts';
import { registerChatRoutes } from './routes/chat.ts';
import { registerFigureRoutes } from './routes/figures.ts';
import { registerFileRoutes } from './routes/files.ts';
import { registerThreadProfileRoutes } from './routes/thread-profile.ts';
import { registerThreadRoutes } from './routes/threads.ts';
import type { EngineOptions } from './thread-engine.ts';
import { ThreadService } from './thread-service.ts';
import { ThreadStore } from './thread-store.ts';
import { TurnQueue } from './turn-queue.ts';
import { announcesBody, isWebUiPath, registerWebUi } from './web-ui.ts';

/**
 * `datalyst serve`. Every option has a default except the data folder and
 * the engine (the model and sandbox a turn runs on).
 */
export interface ServerOptions {
  /** Everything the server keeps: uploads, threads, their runs. */
  dataDir: string;
  engine: EngineOptions;
  /** The model's id as /v1/models and the completions show it. */
  modelId: string;
  /** Default 127.0.0.1. Any other address needs `apiKey`. */
  host?: string;
  /** Default 8200 (DeepAnalyze's port); 0 picks a free one. */
  port?: number;
  /** Bearer key every request but /health must send; required off the default loopback addresses (`DATALYST_SERVER_API_KEY`). */
  apiKey?: string | null;
  /** Turns running at once. Default: the number of cores. */
  maxConcurrentTurns?: number;
  /** Turns waiting behind them; one more answers 429. Default 4 × maxConcurrentTurns. */
  maxQueuedTurns?: number;
  /** Bytes per uploaded file. Default 256 MiB. */
  maxFileBytes?: number;
  /** Bytes of files per thread. Default 1 GiB. */
  maxThreadBytes?: number;
  /** Bytes the whole data folder may hold (uploads, threads, their runs); past it uploads and new turns get 507. Default 20 GiB; null: no limit. */
  maxDataBytes?: number | null;
  /** Bytes of a JSON body. Default 1 MiB. */
  maxJsonBytes?: number;
  /** A thread idle this long gives its sandbox back. Default 10 minutes. */
  idleTimeoutMs?: number;
  /** Sandboxes idle threads keep open at most; past it the least recently used give theirs back. Default max(16, 4 × maxConcurrentTurns). */
  maxOpenSandboxes?: number;
  /** Retry-After on a 429, in seconds. Default 5. */
  retryAfterSeconds?: number;
  /**
   * How often the server refreshes its data folder's lock, in ms. Default 10 000. A lock from another
   * host or PID namespace (a restarted container) is taken over after 3 missed beats.
   */
  dataDirHeartbeatMs?: number;
  /**
   * The URL clients reach the server at, when that is not the address it sees them use: behind a TLS proxy
   * (`https://data.example.com`, a path under it too). Every URL in an answer (files, artifacts, reports,
   * events) starts with it. Default: none, each request's own scheme and `Host` (`X-Forwarded-*` is never read).
   */
  publicUrl?: string;
  /** The Chromium (or Chrome) binary that prints `?format=pdf` reports. Default /usr/bin/chromium (`DATALYST_CHROMIUM`). */
  chromiumPath?: string;
  /** The error log (JSON lines on stderr, level `warn`: 5xx, failed turns, sandbox failures; no line per request). */
  log?: ServerLogOptions;
}

export interface DatalystServer {
  readonly app: FastifyInstance;
  readonly threads: ThreadService;
  /** The address it listens on, e.g. http://127.0.0.1:8200. */
  readonly url: string;
  /** Turns that were running when the last server stopped, now marked interrupted. */
  readonly interruptedOnStart: number;
  /** Cancels running turns, closes sandboxes, stops listening. */
  close(): Promise<void>;
}

/**
 * Builds the server over a data folder (no listening): tests use `app.inject` or `listen`.
 * The folder is locked for this server until `app.close()`; a DataDirInUseError
 * (`DATA_DIR_IN_USE`, fault `user`) when another live server holds it.
 */
export async function createServerApp(
  options: ServerOptions,
): Promise<{ app: FastifyInstance; threads: ThreadService; interrupted: number }> {
  const { app, threads, interrupted } = await buildLockedApp(options);
  return { app, threads, interrupted };
}

async function buildLockedApp(
  options: ServerOptions,
): Promise<{ app: FastifyInstance; threads: ThreadService; interrupted: number; lock: DataDirLock }> {
  const host = options.host ?? '127.0.0.1';
  const apiKey = options.apiKey ?? null;
  checkListenSecurity(host, apiKey);
  if (options.publicUrl !== undefined) checkPublicUrlSecurity(parsePublicUrl(options.publicUrl), apiKey);
  // Before anything in the folder is read or changed: recovery would mark another live server's running turns interrupted.
  const lock = await lockDataDir(
    options.dataDir,
    options.dataDirHeartbeatMs === undefined ? {} : { heartbeatMs: options.dataDirHeartbeatMs },
  );
  try {
    const built = await buildApp(options, apiKey, lock);
    return { ...built, lock };
  } catch (error) {
    await lock.release();
    throw error;
  }
}

async function buildApp(
  options: ServerOptions,
  apiKey: string | null,
  lock: DataDirLock,
): Promise<{ app: FastifyInstance; threads: ThreadService; interrupted: number }> {
  const maxConcurrentTurns = options.maxConcurrentTurns ?? Math.max(1, os.availableParallelism());
  const maxFileBytes = options.maxFileBytes ?? 256 * 1024 * 1024;
  const maxJsonBytes = options.maxJsonBytes ?? 1024 * 1024;
  const maxDataBytes = options.maxDataBytes === undefined ? 20 * 1024 ** 3 : options.maxDataBytes;
  const store = new ThreadStore(options.dataDir);
  // Each thread's folder is measured apart: a turn's end walks its thread's folder only.
  const quota =
    maxDataBytes === null
      ? null
      : new DataQuota(options.dataDir, maxDataBytes, { areasUnder: store.threadsDir });
  const files = new FileStore(options.dataDir, maxFileBytes, quota);
  await Promise.all([files.init(), store.init()]);
  const queue = new TurnQueue({
    maxRunning: maxConcurrentTurns,
    maxQueued: options.maxQueuedTurns ?? 4 * maxConcurrentTurns,
    retryAfterSeconds: options.retryAfterSeconds ?? 5,
  });
  const app = Fastify({
    bodyLimit: maxJsonBytes,
    // Errors as JSON lines on stderr; requests only at --log-level info (see server-log.ts).
    logger: serverLoggerOptions(options.log ?? {}, apiKey),
    return503OnClosing: true,
    // Fastify turns off Node's limit on receiving a request (300 s): a body trickled byte by byte would hold its upload for ever.
    // 15 minutes lets a 256 MiB upload through at 300 KB/s; streamed answers (SSE) are responses, not bound by it.
    requestTimeout: 15 * 60_000,
  });
  // Fastify reads text/plain bodies by default; here a body is JSON or a multipart upload, anything else is a 415.
  app.removeContentTypeParser('text/plain');
  // Released once the app has closed (its turns stopped before that, in DatalystServer.close).
  app.addHook('onClose', async () => lock.release());
  lock.logTo(app.log);
  if (lock.tookOverFrom !== null) {
    const owner = lock.tookOverFrom;
    app.log.warn(
      { lock: lock.path, owner: { pid: owner.pid, host: owner.host, since: owner.since, url: owner.url } },
      `took over the data folder's stale lock: ${owner.reason} (a server that stopped without releasing it)`,
    );
  }
  const threads = new ThreadService({
    log: app.log,
    quota,
    store,
    files,
    queue,
    engine: options.engine,
    modelId: options.modelId,
    maxThreadBytes: options.maxThreadBytes ?? 1024 * 1024 * 1024,
    idleTimeoutMs: options.idleTimeoutMs ?? 10 * 60_000,
    maxOpenSandboxes: options.maxOpenSandboxes ?? Math.max(16, 4 * maxConcurrentTurns),
  });
  const interrupted = await threads.recover();

  await app.register(multipart, {
    // The name as the client sent it, folders included, so that a path is refused rather than cut to its base.
    preservePath: true,
    limits: { fileSize: maxFileBytes, files: 1, fields: 8, fieldSize: 1024, parts: 10 },
  });

  // Without a key, the loopback port is the only barrier: web pages (DNS rebinding, cross-site POSTs) are kept out.
  if (apiKey === null) app.addHook('onRequest', async (request) => checkBrowserRequest(request));
  if (apiKey !== null) {
    const keyMatches = createKeyCheck(apiKey);
    app.addHook('onRequest', async (request, reply) => {
      // The UI's own files are public (no data): the page must load to ask for the key. Read only: a body is never taken without it.
      if (
        request.url === '/health' ||
        ((request.method === 'GET' || request.method === 'HEAD') && isWebUiPath(request.url))
      ) {
        if (!announcesBody(request.headers)) return;
        // Not even an announced body is waited for without the key: refused, and the connection closed.
        void reply.header('connection', 'close');
        throw new ServerRequestError(
          400,
          'BODY_NOT_ALLOWED',
          'A request for the web UI or /health carries no body.',
          { fix: 'Send it without a body (no Content-Length above 0, no Transfer-Encoding).' },
        );
      }
      if (!keyMatches(request.headers.authorization)) {
        // A peer without the key keeps no connection (nor a body it may trickle for ever).
        void reply.header('connection', 'close');
        throw new ServerRequestError(401, 'UNAUTHORIZED', 'A valid API key is required.', {
          fix: 'Send `Authorization: Bearer <key>` with the key the server was started with.',
        });
      }
    });
  }

  app.setErrorHandler((error: FastifyError | DatalystError, request, reply) => {
    // A download route may have set its headers before its stream failed: the error is JSON, shown, not saved.
    void reply.removeHeader('content-disposition').type('application/json; charset=utf-8');
    if (error instanceof ServerRequestError) {
      // A full data folder and the like: the client is told, and so is the operator.
      if (error.status >= 500)
        request.log.error(
          { err: error, statusCode: error.status, method: request.method, url: request.url },
          'request refused',
        );
      if (error.retryAfterSeconds !== undefined)
        void reply.header('retry-after', String(error.retryAfterSeconds));
      return reply.code(error.status).send(errorBody(error.status, error.code, error.message, error.fix));
    }
    const status = 'statusCode' in error && typeof error.statusCode === 'number' ? error.statusCode : 500;
    if (status >= 500)
      request.log.error(
        { err: error, statusCode: status, method: request.method, url: request.url },
        'request failed',
      );
    const code = DatalystError.isInstance(error)
      ? error.code
      : 'code' in error && typeof error.code === 'string'
        ? error.code
        : 'INTERNAL';
    const fix = DatalystError.isInstance(error)
      ? error.fix
      : code === 'FST_ERR_CTP_BODY_TOO_LARGE'
        ? `Send a smaller JSON body (the limit is ${maxJsonBytes} bytes).`
        : status === 413 && code !== 'FST_REQ_FILE_TOO_LARGE'
          ? 'Send one file, in the form field `file`, with at most 8 short fields beside it.'
          : status === 413
            ? fileLimitFix(maxFileBytes)
            : status === 415
              ? 'Send JSON (application/json), or multipart/form-data for uploads.'
              : status >= 500
                ? 'This is a bug in Datalyst; please report it with the server log.'
                : 'Check the request against /openapi.json.';
    // A server fault's message names host paths (ENOENT … /data/…): the client gets the code, the log the rest.
    const message = status >= 500 ? `The server failed (${code}).` : error.message;
    return reply.code(status).send(errorBody(status, code, message, fix));
  });
  app.setNotFoundHandler((request, reply) =>
    reply
      .code(404)
      .send(
        errorBody(
          404,
          'NOT_FOUND',
          `No route ${request.method} ${request.url.split('?')[0]}.`,
          'See /openapi.json for the routes.',
        ),
      ),
  );

  const context: RouteContext = {
    files,
    threads,
    reports: new ReportCache(
      options.chromiumPath === undefined ? {} : { chromiumPath: options.chromiumPath },
    ),
    modelId: options.modelId,
    startedAt: Math.floor(Date.now() / 1000),
    publicUrl: options.publicUrl === undefined ? null : parsePublicUrl(options.publicUrl),
  };
  const openApi = buildOpenApiDocument();
  app.get('/health', async (): Promise<Health> => ({
    status: 'healthy',
    timestamp: Math.floor(Date.now() / 1000),
    turns: { running: queue.running, queued: queue.queued },
  }));
  app.get('/openapi.json', async () => openApi);
  app.get('/v1/models', async () => ({
    object: 'list' as const,
    data: [
      { id: options.modelId, object: 'model' as const, created: context.startedAt, owned_by: 'datalyst' },
    ],
  }));
  registerFileRoutes(app, context);
  registerChatRoutes(app, context);
  registerThreadRoutes(app, context);
  registerChartRoutes(app, context);
  registerThreadProfileRoutes(app, context, options.engine);
  registerFigureRoutes(app, context);
  await registerWebUi(app);
  return { app, threads, interrupted };
}

/**
 * Builds the server and listens. Throws a ListenError (`PORT_IN_USE`,
 * `ADDRESS_UNAVAILABLE`, `PORT_PRIVILEGED`, fault `user`) when it cannot
 * listen where it is asked to, a DataDirInUseError (`DATA_DIR_IN_USE`, fault
 * `user`) when another live server holds its data folder. The folder is
 * released by `close()`.
 */
export async function startServer(options: ServerOptions): Promise<DatalystServer> {
  const host = options.host ?? '127.0.0.1';
  const askedPort = options.port ?? 8200;
  // Before the data folder is opened: a second server on the same folder (whose port is the first's)
  // would mark the first one's running turns interrupted.
  await checkListenAddress(host, askedPort);
  const { app, threads, interrupted, lock } = await buildLockedApp(options);
  try {
    await app.listen({ host, port: askedPort });
  } catch (error) {
    // Taken between the check and now.
    await threads.shutdown();
    await app.close();
    throw listenErrorOf(error, host, askedPort);
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : askedPort;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  // For the message a second server on this folder prints.
  await lock.setUrl(url);
  let closing: Promise<void> | null = null;
  return {
    app,
    threads,
    url,
    interruptedOnStart: interrupted,
    close() {
      closing ??= (async () => {
        await threads.shutdown();
        await app.close();
      })();
      return closing;
    },
  };
}
