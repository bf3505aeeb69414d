import os from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import { loadConfigFile } from '../../config/config-file.ts';
import { parseDurationMs, readEnv, resolveModelSettings } from '../../config/index.ts';
import type { SandboxFactory, WarmPool } from '../../index.ts';
import type { CliContext } from '../cli-context.ts';
import { ExitCode, exitCodeForError, exitCodeHelpFor } from '../exit-codes.ts';
import { handleInterrupts } from '../interrupt.ts';
import type { ExitCodeSink } from '../program.ts';
import { printError } from '../program.ts';
import { serverLogLevels } from '../../server/server-log.ts';

const serveHelp = `
Serves DeepAnalyze's OpenAI-compatible API (/v1/files, /v1/chat/completions
with file_ids and thread_id, SSE) and Datalyst's own thread/turn API
(/v1/threads); /openapi.json describes both, /health answers without a key.

The model is chosen as for \`datalyst analyze\` (--model, the config file,
DATALYST_MODEL; none: the offline analyst). Everything is kept under
--data-dir: a restart loses no upload and no finished turn. One server per
--data-dir: a second one refuses to start (DATA_DIR_IN_USE, naming the first);
the lock of a server that was killed is taken over at the next start (one
from another machine or container once it is 30 s without a heartbeat).

Listening anywhere but 127.0.0.1, ::1 or localhost needs an API key,
DATALYST_SERVER_API_KEY or --api-key-file; clients send it as a bearer token.

Behind a TLS proxy, --public-url gives the address clients use, so that the
download URLs in answers work for them (X-Forwarded-* headers are not read:
any client could send them). A public URL off this machine needs an API key
too: the proxy passes the clients' Authorization header on.

Reports come as html, md, ipynb, json or pdf (?format=); PDF is printed by
headless Chromium (DATALYST_CHROMIUM, default /usr/bin/chromium).

Examples:
  $ datalyst serve
  $ datalyst serve --port 8300 --data-dir /srv/datalyst
  $ DATALYST_SERVER_API_KEY=$(openssl rand -hex 32) datalyst serve --host 0.0.0.0
  $ datalyst serve --base-url http://localhost:8000/v1 --model DeepAnalyze-8B
  $ DATALYST_SERVER_API_KEY=… datalyst serve --public-url https://data.example.com   # behind a TLS proxy

${exitCodeHelpFor([
  [ExitCode.answered, 'stopped by Ctrl-C (running turns cancelled, their sandboxes removed)'],
  [ExitCode.internal, 'internal error (a bug in Datalyst)'],
  [
    ExitCode.usage,
    'a bad option, config file or API key file; a port or address it cannot listen on; a data folder another server uses',
  ],
  [ExitCode.sandboxUnavailable, 'sandbox unavailable (Docker engine, runner image, local Python)'],
  [ExitCode.cancelled, 'a second Ctrl-C (quit at once)'],
])}`;

const serveOptionsSchema = z.object({
  host: z.string().default('127.0.0.1'),
  port: z.coerce.number().int().min(0).max(65535).default(8200),
  dataDir: z.string().default('datalyst-data'),
  apiKeyFile: z.string().optional(),
  publicUrl: z.string().optional(),
  model: z.string().optional(),
  baseUrl: z.string().optional(),
  profile: z.string().optional(),
  offline: z.boolean().optional(),
  maxTurns: z.coerce.number().int().positive().optional(),
  maxQueued: z.coerce.number().int().nonnegative().optional(),
  maxFileMb: z.coerce.number().positive().optional(),
  maxDataGb: z.coerce.number().positive().optional(),
  idleTimeout: z.string().default('10m'),
  warm: z.coerce.number().int().nonnegative().default(1),
  sandbox: z.enum(['docker', 'local']).optional(),
  config: z.string().optional(),
  logLevel: z.enum(serverLogLevels).default('warn'),
});
type ServeCommandOptions = z.infer<typeof serveOptionsSchema>;

export function defineServeCommand(program: Command, context: CliContext, setExitCode: ExitCodeSink): void {
  program
    .command('serve')
    .description('Serve the analysis over HTTP (DeepAnalyze/OpenAI-compatible, plus threads).')
    .option('--host <address>', 'address to listen on (default: 127.0.0.1)')
    .option('--port <n>', 'port (default: 8200)')
    .option('--data-dir <dir>', 'where uploads and threads are kept (default: ./datalyst-data)')
    .option(
      '--api-key-file <file>',
      'file holding the API key clients must send (env DATALYST_SERVER_API_KEY)',
    )
    .option(
      '--public-url <url>',
      'the URL clients reach the server at, behind a TLS proxy (e.g. https://data.example.com); download URLs in answers start with it (default: the scheme and Host of each request)',
    )
    .option('--model <name>', 'model name at the endpoint (env DATALYST_MODEL)')
    .option('--base-url <url>', 'OpenAI-compatible endpoint (env DATALYST_BASE_URL, OPENAI_BASE_URL)')
    .option('--profile <profile>', 'protocol profile: deepanalyze or chat')
    .option('--offline', 'use the built-in offline analyst')
    .option('--max-turns <n>', 'turns running at once (default: the number of cores)')
    .option('--max-queued <n>', 'turns waiting; more answer 429 (default: 4 × max-turns)')
    .option('--max-file-mb <mb>', 'largest upload (default: 256)')
    .option('--max-data-gb <gb>', 'bytes the whole data folder may hold; past it 507 (default: 20)')
    .option('--idle-timeout <duration>', 'an idle thread gives its sandbox back after this (default: 10m)')
    .option('--warm <n>', 'sandboxes kept started for new turns (default: 1; 0: none)')
    .option('--sandbox <backend>', 'docker or local (local: NO isolation) (default: docker)')
    .option('--config <file>', 'config file (default: ./datalyst.config.json if present)')
    .option(
      '--log-level <level>',
      `JSON log on stderr: ${serverLogLevels.join(', ')} (default: warn: errors only; info: every request)`,
    )
    .addHelpText('after', serveHelp)
    .action(async (rawOptions: unknown) => {
      setExitCode(await runServe(context, serveOptionsSchema.parse(rawOptions)));
    });
}

async function readApiKey(options: ServeCommandOptions, cwd: string): Promise<string | null> {
  if (options.apiKeyFile !== undefined) {
    // Refused when its group or others may read it (as ssh refuses such a private key).
    const { readApiKeyFile } = await import('../../server/api-key-file.ts');
    return readApiKeyFile(path.resolve(cwd, options.apiKeyFile));
  }
  return readEnv('DATALYST_SERVER_API_KEY') ?? null;
}

async function runServe(context: CliContext, options: ServeCommandOptions): Promise<number> {
  const interrupts = handleInterrupts({
    source: context.signals,
    onFirst: () => context.stderr.write('Stopping: cancelling running turns and removing their sandboxes…\n'),
    onSecond: () => context.exit(ExitCode.cancelled),
  });
  let pool: WarmPool | null = null;
  try {
    const {
      checkDataDirFree,
      checkListenAddress,
      checkListenSecurity,
      checkPublicUrlSecurity,
      parsePublicUrl,
      startServer,
    } = await import('../../server/index.ts');
    const dataDir = path.resolve(context.cwd, options.dataDir);
    // A missing or weak key (or a key file others may read), a port in use, or a data folder another server
    // holds is said at once, before Docker is checked and a warm container started for nothing (startServer
    // checks the key again and takes the folder's lock for real).
    const apiKey = await readApiKey(options, context.cwd);
    checkListenSecurity(options.host, apiKey);
    if (options.publicUrl !== undefined) checkPublicUrlSecurity(parsePublicUrl(options.publicUrl), apiKey);
    await checkListenAddress(options.host, options.port);
    await checkDataDirFree(dataDir);
    const configFile = await loadConfigFile(options.config ?? context.env.configPath, context.cwd);
    const modelSettings = resolveModelSettings({
      flags: {
        model: options.model,
        baseUrl: options.baseUrl,
        profile: options.profile,
        offline: options.offline,
      },
      env: context.env,
      configFile,
    });
    const backend = options.sandbox ?? (context.env.sandbox === 'local' ? 'local' : 'docker');
    const image = await context.prepareSandbox({
      backend,
      image: context.env.image ?? null,
      onProgress: (line) => context.stderr.write(`  ${line}\n`),
      signal: interrupts.signal,
    });
    // Loaded only when the command runs (the CLI starts fast without them).
    const sandbox = await import('../../sandbox/index.ts');
    const { createModel } = await import('../model-factory.ts');
    const { OFFLINE_ANALYST_ID } = await import('../../agent/index.ts');
    let createSandbox: SandboxFactory = context.createSandbox;
    if (backend === 'docker') {
      // Containers a killed server left behind (their owner PID is gone).
      await sandbox.reapOrphanedContainers().catch(() => undefined);
      if (options.warm > 0) {
        const warmPool = sandbox.createWarmPool({
          size: options.warm,
          ...(image === undefined ? {} : { image }),
        });
        pool = warmPool;
        createSandbox = (sandboxOptions) =>
          warmPool.acquire({
            ...(sandboxOptions.workspaceDir === undefined
              ? {}
              : { workspaceDir: sandboxOptions.workspaceDir }),
            ...(sandboxOptions.signal === undefined ? {} : { signal: sandboxOptions.signal }),
          });
      }
    }
    const server = await startServer({
      dataDir,
      host: options.host,
      port: options.port,
      apiKey,
      ...(options.publicUrl === undefined ? {} : { publicUrl: options.publicUrl }),
      modelId: modelSettings.kind === 'offline' ? OFFLINE_ANALYST_ID : modelSettings.id,
      engine: {
        createModel: () => createModel(modelSettings),
        createSandbox,
        sandbox: { backend, ...(image === undefined ? {} : { image }) },
        ...(modelSettings.kind === 'endpoint' ? { profile: modelSettings.profile } : {}),
      },
      maxConcurrentTurns: options.maxTurns ?? Math.max(1, os.availableParallelism()),
      ...(options.maxQueued === undefined ? {} : { maxQueuedTurns: options.maxQueued }),
      ...(options.maxFileMb === undefined
        ? {}
        : { maxFileBytes: Math.round(options.maxFileMb * 1024 * 1024) }),
      ...(options.maxDataGb === undefined ? {} : { maxDataBytes: Math.round(options.maxDataGb * 1024 ** 3) }),
      idleTimeoutMs: parseDurationMs(options.idleTimeout, '--idle-timeout'),
      ...(context.env.chromium === undefined ? {} : { chromiumPath: context.env.chromium }),
      // The model's key never reaches the log either (the server's own key is always kept out).
      log: {
        level: options.logLevel,
        secrets:
          modelSettings.kind === 'endpoint' && modelSettings.apiKey !== null ? [modelSettings.apiKey] : [],
      },
    });
    context.stdout.write(
      `Datalyst serving on ${server.url} (model ${modelSettings.kind === 'offline' ? 'offline analyst' : modelSettings.id}, data in ${options.dataDir}${apiKey === null ? '' : ', API key required'}${options.publicUrl === undefined ? '' : `, URLs in answers start with ${parsePublicUrl(options.publicUrl)}`})\n`,
    );
    if (server.interruptedOnStart > 0) {
      context.stdout.write(
        `${server.interruptedOnStart} turn(s) the last server left running are marked interrupted.\n`,
      );
    }
    await new Promise<void>((resolve) => {
      if (interrupts.signal.aborted) resolve();
      interrupts.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    await server.close();
    return ExitCode.answered;
  } catch (error) {
    printError(context, error);
    return exitCodeForError(error);
  } finally {
    await pool?.close();
    interrupts.dispose();
  }
}
