import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createOpenAIChatModel } from '../../../src/index.ts';
import type { LanguageModel, ModelChunk, ModelRequest, SandboxFactory } from '../../../src/index.ts';
import { startServer, type DatalystServer, type ServerOptions } from '../../../src/server/index.ts';
import { createFakeSandbox, printed, slowCell, type FakeSandbox } from '../../agent/support/fake-session.ts';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../../support/fake-openai-server.ts';
import { rawRequest } from './raw-http.ts';

/**
 * A scripted model for server tests: a question containing "slow" gets a
 * cell that sleeps until cancelled; "write" gets a cell that writes a file;
 * any other question gets a quick cell; once the cell's output is back the
 * model answers. Each reply streams in small pieces, as a real model's does.
 */
export function scriptedModel(): LanguageModel {
  return {
    id: 'scripted-test-model',
    contextWindowTokens: 32_768,
    async *stream(request: ModelRequest): AsyncGenerator<ModelChunk> {
      const last = request.messages.at(-1)?.content ?? '';
      // The question being answered: the latest user message that is not a cell's output.
      const instruction =
        request.messages.findLast(
          (message) => message.role === 'user' && !message.content.includes('cell-output'),
        )?.content ?? '';
      const reply = last.includes('cell-output')
        ? '<Answer>The mean is 42.</Answer>'
        : instruction.includes('slow')
          ? '<Analyze>Wait.</Analyze><Code>\nslow()\n</Code>'
          : instruction.includes('write')
            ? '<Analyze>Save it.</Analyze><Code>\nwrite()\n</Code>'
            : instruction.includes('chart')
              ? '<Analyze>Draw it.</Analyze><Code>\nchart()\n</Code>'
              : '<Analyze>Look at the data.</Analyze><Code>\nprint(42)\n</Code>';
      for (let at = 0; at < reply.length; at += 8) {
        if (request.signal?.aborted) throw request.signal.reason;
        yield { type: 'text-delta', text: reply.slice(at, at + 8) };
        await new Promise((resolve) => setImmediate(resolve));
      }
      yield { type: 'finish', reason: 'stop' };
    },
  };
}

/** A vega-lite bar chart, as a cell that displays one reports it. */
export const scriptedChart = {
  id: 'chart-1',
  spec: {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    data: { values: [{ region: 'north', units: 18 }] },
    mark: 'bar',
    encoding: { x: { field: 'region', type: 'nominal' }, y: { field: 'units', type: 'quantitative' } },
  },
};

/** A fake sandbox: `slow()` waits (until aborted, at most 60 s); `write()` leaves out.csv as an artifact; `chart()` displays `scriptedChart`. */
export function scriptedSandbox(): FakeSandbox {
  const files = new Map<string, Uint8Array>([
    ['out.csv', new TextEncoder().encode('region,total\nnorth,18\n')],
  ]);
  return createFakeSandbox({
    files,
    run: (code, _index, signal) => {
      if (code.includes('slow()')) return slowCell(60_000, signal, printed('cell-output slow\n'));
      if (code.includes('write()'))
        return {
          ...printed('cell-output wrote out.csv\n'),
          files: [{ path: 'out.csv', change: 'created' as const, sizeBytes: 22 }],
        };
      if (code.includes('chart()')) return { ...printed('cell-output chart\n'), charts: [scriptedChart] };
      return printed('cell-output 42\n');
    },
  });
}

export interface TestServer {
  server: DatalystServer;
  url: string;
  dataDir: string;
  sandbox: FakeSandbox;
  /** The server's log lines (JSON), captured instead of going to stderr (unless the test passed its own `log.stream`). */
  logLines: string[];
  close(): Promise<void>;
}

export async function startTestServer(
  options: Partial<Omit<ServerOptions, 'engine'>> & {
    createSandbox?: SandboxFactory;
    dataDir?: string;
    /** The model of each thread. Default `scriptedModel`. */
    createModel?: () => LanguageModel;
  } = {},
): Promise<TestServer> {
  const dataDir = options.dataDir ?? (await mkdtemp(path.join(os.tmpdir(), 'datalyst-server-')));
  const sandbox = scriptedSandbox();
  const { createSandbox, createModel, ...rest } = options;
  const logLines: string[] = [];
  const server = await startServer({
    port: 0,
    modelId: 'scripted-test-model',
    maxConcurrentTurns: 2,
    maxQueuedTurns: 4,
    ...rest,
    log: { stream: { write: (line: string) => logLines.push(line) }, ...rest.log },
    dataDir,
    engine: {
      createModel: createModel ?? scriptedModel,
      createSandbox: createSandbox ?? sandbox.factory,
      profile: 'chat',
    },
  });
  return {
    server,
    url: server.url,
    dataDir,
    sandbox,
    logLines,
    async close() {
      await server.close();
      if (options.dataDir === undefined) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** A new thread without files, asked `question` over raw HTTP; its id. Throws unless the question was taken (202). */
export async function askOnNewThread(url: string, question: string): Promise<string> {
  const thread = JSON.parse((await rawRequest(url, 'POST', '/v1/threads')).body) as { id: string };
  const turn = await rawRequest(
    url,
    'POST',
    `/v1/threads/${thread.id}/turns`,
    { 'content-type': 'application/json' },
    JSON.stringify({ question }),
  );
  if (turn.status !== 202) throw new Error(`the question was not taken: ${turn.status} ${turn.body}`);
  return thread.id;
}

/** Polls a turn until it has `status`; throws after 10 s. */
export async function waitForTurnStatus(
  url: string,
  threadId: string,
  index: number,
  status: string,
): Promise<void> {
  for (let attempt = 0; attempt < 400; attempt += 1) {
    const turn = JSON.parse(
      (await rawRequest(url, 'GET', `/v1/threads/${threadId}/turns/${index}`)).body,
    ) as { status: string };
    if (turn.status === status) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`turn ${index} of ${threadId} never reached ${status}`);
}

/** Reads an SSE body into events (`id`, parsed `data`), stopping after `limit` events when given. */
export async function readSse(
  response: Response,
  limit = Infinity,
): Promise<{ events: { id: string | null; data: string }[]; raw: string }> {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let raw = '';
  const events: { id: string | null; data: string }[] = [];
  let buffer = '';
  while (events.length < limit) {
    const { done, value } = await reader.read();
    if (done) break;
    const text = decoder.decode(value, { stream: true });
    raw += text;
    buffer += text;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) !== -1 && events.length < limit) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (block.startsWith(':')) continue;
      let id: string | null = null;
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('id: ')) id = line.slice(4);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
      }
      events.push({ id, data: data.join('\n') });
    }
  }
  await reader.cancel().catch(() => undefined);
  return { events, raw };
}

/** A model reply (for the fake OpenAI server's script) that runs one Python cell. */
export const codeReply = (body: string) => ({
  type: 'text' as const,
  text: `<Analyze>Next.</Analyze>\n<Code>\n\`\`\`python\n${body}\n\`\`\`\n</Code>`,
});

/** A model reply that answers. */
export const answerReply = (text: string) => ({ type: 'text' as const, text: `<Answer>${text}</Answer>` });

export interface ScriptedDockerServer {
  server: DatalystServer;
  url: string;
  /** The model behind it: enqueue its replies. */
  model: FakeOpenAIServer;
  dataDir: string;
  /** Closes the server and the model, removes the data folder (when the harness made it). */
  close(): Promise<void>;
}

/**
 * `datalyst serve` in this process on the real sandbox, with a scripted model
 * behind the fake OpenAI server (over HTTP, the `chat` profile), as the
 * Docker-backed server tests run it.
 */
export async function startScriptedDockerServer(
  options: Partial<Omit<ServerOptions, 'engine' | 'dataDir' | 'modelId'>> & {
    dataDir?: string;
    model?: FakeOpenAIServer;
  } = {},
): Promise<ScriptedDockerServer> {
  const { dataDir: givenDir, model: givenModel, ...rest } = options;
  const dataDir = givenDir ?? (await mkdtemp(path.join(os.tmpdir(), 'datalyst-serve-scripted-')));
  const model = givenModel ?? (await startFakeOpenAIServer());
  const server = await startServer({
    port: 0,
    maxConcurrentTurns: 2,
    ...rest,
    dataDir,
    modelId: 'gpt-test',
    engine: {
      createModel: () => createOpenAIChatModel({ baseUrl: model.baseUrl, model: 'gpt-test' }),
      profile: 'chat',
    },
  });
  return {
    server,
    url: server.url,
    model,
    dataDir,
    async close() {
      await server.close();
      if (givenModel === undefined) await model.close();
      if (givenDir === undefined) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * `datalyst serve` in its own process, as people run it, over `dataDir`,
 * with the model at `modelUrl` (the fake OpenAI server); resolves with its
 * URL once it listens. The caller kills it (the harness kills what is left
 * with `killServeProcesses`).
 */
export async function startServeProcess(
  dataDir: string,
  modelUrl: string,
  extraArgs: readonly string[] = [],
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    [
      'bin/datalyst.js',
      'serve',
      '--port',
      '0',
      '--data-dir',
      dataDir,
      '--base-url',
      modelUrl,
      '--model',
      'gpt-test',
      '--profile',
      'chat',
      '--warm',
      '0',
      ...extraArgs,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } },
  );
  serveProcesses.push(child);
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /serving on (http:\/\/\S+)/.exec(output);
      if (match?.[1] !== undefined) resolve(match[1]);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (exitCode) => reject(new Error(`serve exited with ${exitCode}:\n${output}`)));
  });
  return { child, url };
}

const serveProcesses: ChildProcess[] = [];

/** SIGKILLs every `startServeProcess` child still running (for an afterAll). */
export function killServeProcesses(): void {
  for (const child of serveProcesses.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
}
