import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { streamAnalysis } from '../../../src/agent/analyze.ts';
import type { AnalyzeOptions } from '../../../src/agent/analyze-options.ts';
import type { AgentEvent, AnalysisResult } from '../../../src/agent/events.ts';
import { createOpenAIChatModel, type OpenAIChatModelOptions } from '../../../src/agent/openai-chat-model.ts';
import { traceRecordSchema, type TraceRecord } from '../../../src/trace/schema.ts';
import {
  startFakeOpenAIServer,
  type FakeOpenAIServer,
  type FakeOpenAIServerOptions,
} from '../../support/fake-openai-server.ts';
import { createFakeSandbox, type FakeSandbox, type FakeSessionOptions } from './fake-session.ts';

export interface HarnessRun {
  events: AgentEvent[];
  result: AnalysisResult;
  server: FakeOpenAIServer;
  sandbox: FakeSandbox;
  trace: TraceRecord[];
  runDir: string;
}

export interface HarnessOptions {
  server?: FakeOpenAIServerOptions;
  session?: FakeSessionOptions;
  model?: Partial<OpenAIChatModelOptions>;
  analyze?: Partial<AnalyzeOptions>;
  /** Called with the run folder (not created yet) before the run starts. */
  beforeRun?: (runDir: string) => Promise<unknown>;
  /** Called with each event as it arrives (to abort at a given moment, say). */
  onEvent?: (event: AgentEvent) => void;
}

/** Temporary folders and servers of one test file, removed by `cleanUpHarness`. */
const cleanups: (() => Promise<void>)[] = [];

export async function cleanUpHarness(): Promise<void> {
  while (cleanups.length > 0) await cleanups.pop()?.();
}

export async function makeWorkspace(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-ws-'));
  await writeFile(path.join(dir, 'sales.csv'), 'region,revenue\nnorth,10\nsouth,20\n');
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** An empty folder for run folders, removed by `cleanUpHarness`. */
export async function makeRunsDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-runs-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

export async function readTrace(runDir: string): Promise<TraceRecord[]> {
  const text = await readFile(path.join(runDir, 'trace.jsonl'), 'utf8');
  return text
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => traceRecordSchema.parse(JSON.parse(line)));
}

/** Runs the real loop against the fake OpenAI server (real HTTP) and a fake sandbox session. */
export async function runLoop(options: HarnessOptions): Promise<HarnessRun> {
  const server = await startFakeOpenAIServer(options.server ?? {});
  cleanups.push(() => server.close());
  const sandbox = createFakeSandbox(options.session ?? {});
  const workspaceDir = await makeWorkspace();
  const runDir = path.join(await makeRunsDir(), 'run');
  await options.beforeRun?.(runDir);
  const model = createOpenAIChatModel({
    baseUrl: server.baseUrl,
    model: 'fake-model',
    retry: { maxRetries: 2, initialDelayMs: 5, maxDelayMs: 50 },
    ...options.model,
  });
  const events: AgentEvent[] = [];
  let result: AnalysisResult | undefined;
  for await (const event of streamAnalysis({
    instruction: 'Which region sells more?',
    workspaceDir,
    model,
    createSandbox: sandbox.factory,
    outDir: runDir,
    ...options.analyze,
  })) {
    events.push(event);
    options.onEvent?.(event);
    if (event.type === 'run-end') result = event.result;
  }
  if (result === undefined) throw new Error('no run-end event');
  return { events, result, server, sandbox, trace: await readTrace(runDir), runDir };
}

export function eventTypes(events: readonly AgentEvent[]): string[] {
  return events.map((event) => event.type);
}
