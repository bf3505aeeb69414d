// npm run bench:server — what `datalyst serve` adds to a turn, under load.
//
// 16 threads × 3 questions of the offline analyst at once, on the real Docker
// sandbox, two ways in the same run (ABBA blocks: library, server, server,
// library, BENCH_ROUNDS times (default 2), so drift on a shared machine falls
// on both; each block's own ratios are printed beside the pooled ones):
//   library — openThread/ask called directly, at most MAX_TURNS turns at once
//             (a semaphore; the server's queue does the same);
//   server  — `datalyst serve --offline` in its own process, driven over HTTP:
//             POST a turn, follow its SSE events to `turn-done`.
// Turn latency is the time a turn runs (slot taken → turn ended); the server's
// end-to-end time (POST → turn-done, queue included) is printed beside it.
// Both sides see the same limits: MAX_TURNS turns at once, no warm pool (--warm 0), the
// same workspace file. Where a first question's time goes is printed for both
// (firstQuestionPhases: the sandbox's start and the workspace profile, the
// analysis, and what comes after the library's turn-end — on the server,
// recording the turn and sending turn-done), with the CPU the server used for
// the measured turns and how busy the whole machine was in each phase.
// Also: the server process's peak RSS, errors, and what an idle thread costs
// (its container's memory, and that the idle timeout gives it back).
// Both sides are one process for the whole run, equally warm: the library's
// blocks run in this process, the server's in one `datalyst serve` whose
// threads are deleted at the end of each block, as the library closes its own.
// BENCH_SERVER_PER_BLOCK=1 starts a fresh server for every server block (how
// this bench measured until 2026-11-25): its code is then less optimised by
// the JIT than the library's, which earlier blocks have warmed.
// Goal: server p50/p95 ≤ 1.1 × library. Prints one JSON document.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import Docker from 'dockerode';
import { createOfflineAnalyst, openThread } from '../src/index.ts';
import { containerLabels } from '../src/sandbox/index.ts';
import {
  QUESTIONS,
  followTurn,
  csv,
  processCpuMs,
  quantile,
  startServe,
  type ServeProcess,
} from './support/serve-process.ts';

const THREADS = Number(process.env.BENCH_THREADS ?? 16);
const TURNS = Number(process.env.BENCH_TURNS ?? 3);
const MAX_TURNS = Number(process.env.BENCH_MAX_TURNS ?? Math.max(1, os.availableParallelism()));
/** ABBA blocks (library, server, server, library): on a shared machine one block is at the mercy of what else runs. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const SERVER_PER_BLOCK = process.env.BENCH_SERVER_PER_BLOCK === '1';
const round = (value: number): number => Math.round(value * 10) / 10;
const summary = (values: readonly number[]) => ({
  p50Ms: round(quantile(values, 0.5)),
  p95Ms: round(quantile(values, 0.95)),
  n: values.length,
});

/** One turn's latency; turn 0 is a thread's first question (the full analysis), later ones follow up. */
interface Sample {
  turn: number;
  ms: number;
  /** When (ms after the turn began running) each phase-marking event was seen: where the time goes. */
  marks: Partial<Record<PhaseEvent, number>>;
}

/** Events that end a phase of a turn, on both sides: sandbox start + workspace profile (first question), the analysis, the end. */
const PHASE_EVENTS = ['run-start', 'profile-end', 'execution-start', 'turn-end'] as const;
type PhaseEvent = (typeof PHASE_EVENTS)[number];
const isPhaseEvent = (type: string): type is PhaseEvent => (PHASE_EVENTS as readonly string[]).includes(type);

/**
 * p50 of each phase of first questions: start → run-start (the turn is set up), run-start → profile-end
 * (the sandbox starts, the workspace is profiled), profile-end → turn-end (the analysis), turn-end → the
 * measured end (the server: recording the turn and sending turn-done).
 */
function phaseSplit(samples: readonly Sample[]) {
  const first = samples.filter((sample) => sample.turn === 0);
  const step = (from: PhaseEvent | 'start', to: PhaseEvent | 'end') =>
    round(
      quantile(
        first.map(
          (sample) =>
            (to === 'end' ? sample.ms : (sample.marks[to] ?? Number.NaN)) -
            (from === 'start' ? 0 : (sample.marks[from] ?? Number.NaN)),
        ),
        0.5,
      ),
    );
  return {
    setupP50Ms: step('start', 'run-start'),
    sandboxAndProfileP50Ms: step('run-start', 'profile-end'),
    firstCellAfterProfileP50Ms: step('profile-end', 'execution-start'),
    analysisP50Ms: step('profile-end', 'turn-end'),
    afterTurnEndP50Ms: step('turn-end', 'end'),
  };
}

const split = (samples: readonly Sample[]) => ({
  all: summary(samples.map((sample) => sample.ms)),
  firstQuestion: summary(samples.filter((sample) => sample.turn === 0).map((sample) => sample.ms)),
  followUps: summary(samples.filter((sample) => sample.turn > 0).map((sample) => sample.ms)),
});

/** What every block prints: its latencies, where first questions spent their time, its errors and wall time. */
const blockSummary = (result: { latencies: Sample[]; errors: number; wallMs: number }) => ({
  ...split(result.latencies),
  firstQuestionPhases: phaseSplit(result.latencies),
  errors: result.errors,
  wallS: round(result.wallMs / 1000),
});

const ratio = (a: number, b: number): number => Math.round((a / b) * 100) / 100;

class Semaphore {
  #free: number;
  readonly #waiting: (() => void)[] = [];
  constructor(size: number) {
    this.#free = size;
  }
  async take(): Promise<() => void> {
    if (this.#free > 0) this.#free -= 1;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    return () => {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#free += 1;
    };
  }
}

async function libraryPhase(
  workspaceDir: string,
  runsDir: string,
): Promise<{ latencies: Sample[]; errors: number; wallMs: number }> {
  const slots = new Semaphore(MAX_TURNS);
  const latencies: Sample[] = [];
  let errors = 0;
  // One question first, not measured: both sides are timed warm (modules loaded, code optimised).
  const warmUp = await openThread({
    workspaceDir,
    model: createOfflineAnalyst(),
    outDir: path.join(runsDir, `warm-${Date.now()}`),
  });
  await warmUp.ask(QUESTIONS[0] ?? 'Go.').result;
  await warmUp.close();
  const started = performance.now();
  // Threads stay open until every question is answered, as the server's do (their kernels wait for a follow-up).
  const threads = await Promise.all(
    Array.from({ length: THREADS }, (_, threadIndex) =>
      openThread({
        workspaceDir,
        model: createOfflineAnalyst(),
        outDir: path.join(runsDir, `library-${threadIndex}-${Date.now()}`),
      }),
    ),
  );
  try {
    await Promise.all(
      threads.map(async (thread) => {
        for (let turn = 0; turn < TURNS; turn += 1) {
          const release = await slots.take();
          const at = performance.now();
          const marks: Sample['marks'] = {};
          try {
            const asked = thread.ask(QUESTIONS[turn % QUESTIONS.length] ?? 'Go on.');
            for await (const event of asked)
              if (isPhaseEvent(event.type)) marks[event.type] ??= performance.now() - at;
            const result = await asked.result;
            if (
              result.termination.reason === 'cancelled' ||
              result.termination.reason === 'model-unavailable'
            )
              errors += 1;
            latencies.push({ turn, ms: performance.now() - at, marks });
          } catch {
            errors += 1;
          } finally {
            release();
          }
        }
      }),
    );
  } finally {
    await Promise.all(threads.map((thread) => thread.close()));
  }
  return { latencies, errors, wallMs: performance.now() - started };
}

function startServerBlock(dataDir: string, idleTimeout: string): Promise<ServeProcess> {
  return startServe(dataDir, [
    '--max-turns',
    String(MAX_TURNS),
    '--max-queued',
    String(THREADS * TURNS),
    '--warm',
    '0',
    '--idle-timeout',
    idleTimeout,
  ]);
}

/** The whole machine's CPU use (every process, containers included) since `before`, as busy core-seconds and a fraction. */
async function machineCpu(
  before?: number[],
): Promise<{ ticks: number[]; busyCoreS: number; busyFraction: number }> {
  const fields = ((await readFile('/proc/stat', 'utf8')).split('\n')[0] ?? '')
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  if (before === undefined) return { ticks: fields, busyCoreS: 0, busyFraction: 0 };
  const delta = fields.map((value, index) => value - (before[index] ?? 0));
  const total = delta.reduce((sum, value) => sum + value, 0);
  const idle = (delta[3] ?? 0) + (delta[4] ?? 0);
  return {
    ticks: fields,
    busyCoreS: round((total - idle) / 100),
    busyFraction: Math.round(((total - idle) / total) * 100) / 100,
  };
}

/** CPU seconds (user + system) a process has used so far. */
async function cpuSeconds(pid: number): Promise<number> {
  return round((await processCpuMs(pid)) / 1000);
}

async function peakRssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
  return round(kb / 1024);
}

/** Deletes a block's threads and waits until their containers are gone, so that removing them is not done during the next block. */
async function deleteThreads(server: ServeProcess, threadIds: readonly string[]): Promise<void> {
  await Promise.all(threadIds.map((id) => fetch(`${server.url}/v1/threads/${id}`, { method: 'DELETE' })));
  const docker = new Docker();
  const waitedFrom = performance.now();
  while (performance.now() - waitedFrom < 60_000) {
    const left = await docker.listContainers({
      all: true,
      filters: { label: [`${containerLabels.ownerPid}=${server.pid}`] },
    });
    if (left.length === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('the server did not remove the containers of the threads deleted at the end of a block');
}

async function serverPhase(server: ServeProcess, csvPath: string, measureIdle: boolean) {
  const json = (body: unknown) => ({
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const latencies: Sample[] = [];
  const endToEnd: number[] = [];
  let errors = 0;
  const threadIds: string[] = [];
  try {
    const form = new FormData();
    form.append('file', new Blob([await readFile(csvPath)]), 'sales.csv');
    const file = (await (await fetch(`${server.url}/v1/files`, { method: 'POST', body: form })).json()) as {
      id: string;
    };
    // One question first, not measured (as on the library's side).
    const warm = (await (await fetch(`${server.url}/v1/threads`, json({ file_ids: [file.id] }))).json()) as {
      id: string;
    };
    const warmTurn = await fetch(
      `${server.url}/v1/threads/${warm.id}/turns`,
      json({ question: QUESTIONS[0] }),
    );
    await followTurn(((await warmTurn.json()) as { events_url: string }).events_url);
    await fetch(`${server.url}/v1/threads/${warm.id}`, { method: 'DELETE' });
    const serverCpuBefore = await cpuSeconds(server.pid);
    const measuredFrom = performance.now();
    await Promise.all(
      Array.from({ length: THREADS }, async () => {
        const thread = (await (
          await fetch(`${server.url}/v1/threads`, json({ file_ids: [file.id] }))
        ).json()) as { id: string };
        threadIds.push(thread.id);
        for (let turn = 0; turn < TURNS; turn += 1) {
          const postedAt = performance.now();
          const response = await fetch(
            `${server.url}/v1/threads/${thread.id}/turns`,
            json({ question: QUESTIONS[turn % QUESTIONS.length] }),
          );
          if (response.status !== 202) {
            errors += 1;
            continue;
          }
          const { events_url } = (await response.json()) as { events_url: string };
          const { runningAt, doneAt, status, seenAt } = await followTurn(events_url);
          if (status !== 'finished') errors += 1;
          const marks: Sample['marks'] = {};
          for (const type of PHASE_EVENTS) {
            const seen = seenAt.get(type);
            if (seen !== undefined) marks[type] = seen - runningAt;
          }
          latencies.push({ turn, ms: doneAt - runningAt, marks });
          endToEnd.push(doneAt - postedAt);
        }
      }),
    );
    const wallMs = performance.now() - measuredFrom;
    const rssMb = await peakRssMb(server.pid);
    // CPU the server used for the measured turns (its start and warm-up left out, as the library's are).
    const serverCpuS = round((await cpuSeconds(server.pid)) - serverCpuBefore);
    let idle: Record<string, unknown> | null = null;
    if (measureIdle) idle = await idleCost(server, threadIds);
    else await deleteThreads(server, threadIds);
    return { latencies, endToEnd, errors, wallMs, rssMb, idle, serverCpuS };
  } finally {
    if (SERVER_PER_BLOCK) await server.stop();
  }
}

/** An idle thread keeps its kernel (a container) until the idle timeout gives it back. */
async function idleCost(
  server: ServeProcess,
  threadIds: readonly string[],
): Promise<Record<string, unknown>> {
  const docker = new Docker();
  const owned = () =>
    docker.listContainers({ filters: { label: [`${containerLabels.ownerPid}=${server.pid}`] } });
  const containers = await owned();
  const memories = await Promise.all(
    containers.map(async (info) => {
      const stats = (await docker.getContainer(info.Id).stats({ stream: false })) as {
        memory_stats: { usage?: number; stats?: { inactive_file?: number } };
      };
      return ((stats.memory_stats.usage ?? 0) - (stats.memory_stats.stats?.inactive_file ?? 0)) / 1024 / 1024;
    }),
  );
  const rssBefore = await peakRssMb(server.pid);
  const waitedFrom = performance.now();
  let left = containers.length;
  while (left > 0 && performance.now() - waitedFrom < 60_000) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    left = (await owned()).length;
  }
  const thread = (await (await fetch(`${server.url}/v1/threads/${threadIds[0]}`)).json()) as {
    sandbox_open: boolean;
  };
  return {
    idleThreads: threadIds.length,
    containersHeldWhileIdle: containers.length,
    containerMemoryPerIdleThreadMb: {
      p50: round(quantile(memories, 0.5)),
      p95: round(quantile(memories, 0.95)),
      n: memories.length,
    },
    serverPeakRssMb: rssBefore,
    containersLeftAfterIdleTimeout: left,
    sandboxOpenAfterIdleTimeout: thread.sandbox_open,
    secondsUntilAllGivenBack: round((performance.now() - waitedFrom) / 1000),
  };
}

async function main(): Promise<void> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'datalyst-bench-server-'));
  const workspaceDir = path.join(root, 'workspace');
  await (await import('node:fs/promises')).mkdir(workspaceDir);
  const csvPath = path.join(workspaceDir, 'sales.csv');
  await writeFile(csvPath, csv);
  try {
    const library: Sample[] = [];
    const server: Sample[] = [];
    const serverEndToEnd: number[] = [];
    const phases: Record<string, unknown>[] = [];
    let errors = 0;
    let rssMb = 0;
    let idle: Record<string, unknown> | null = null;
    const order = Array.from(
      { length: ROUNDS },
      () => ['library', 'server', 'server', 'library'] as const,
    ).flat();
    const blocks: { library: Sample[]; server: Sample[] }[] = [];
    const lastServerBlock = order.length - 2;
    let sharedServer: ServeProcess | undefined;
    const serverFor = async (index: number): Promise<ServeProcess> =>
      SERVER_PER_BLOCK
        ? startServerBlock(path.join(root, `data-${index}`), index === lastServerBlock ? '20s' : '10m')
        : (sharedServer ??= await startServerBlock(path.join(root, 'data'), '20s'));
    try {
      for (const [index, kind] of order.entries()) {
        if (index % 4 === 0) blocks.push({ library: [], server: [] });
        const block = blocks.at(-1) as { library: Sample[]; server: Sample[] };
        const machineBefore = await machineCpu();
        const cpuBefore = process.cpuUsage();
        const benchCpuS = () => {
          const used = process.cpuUsage(cpuBefore);
          return round((used.user + used.system) / 1e6);
        };
        if (kind === 'library') {
          const result = await libraryPhase(workspaceDir, path.join(root, 'runs'));
          library.push(...result.latencies);
          block.library.push(...result.latencies);
          errors += result.errors;
          phases.push({
            kind,
            ...blockSummary(result),
            cpuS: { benchProcess: benchCpuS(), machine: (await machineCpu(machineBefore.ticks)).busyCoreS },
            machineBusy: (await machineCpu(machineBefore.ticks)).busyFraction,
          });
        } else {
          const result = await serverPhase(await serverFor(index), csvPath, index === lastServerBlock);
          server.push(...result.latencies);
          block.server.push(...result.latencies);
          serverEndToEnd.push(...result.endToEnd);
          errors += result.errors;
          rssMb = Math.max(rssMb, result.rssMb);
          idle = result.idle ?? idle;
          phases.push({
            kind,
            ...blockSummary(result),
            peakRssMb: result.rssMb,
            cpuS: {
              benchProcess: benchCpuS(),
              serverProcess: result.serverCpuS,
              machine: (await machineCpu(machineBefore.ticks)).busyCoreS,
            },
            machineBusy: (await machineCpu(machineBefore.ticks)).busyFraction,
          });
        }
        console.error(`[bench:server] ${JSON.stringify(phases.at(-1))}`);
      }
    } finally {
      await sharedServer?.stop();
    }
    const lib = split(library);
    const srv = split(server);
    // Each ABBA block's ratios: the phases of one block ran close in time, under about the same outside load.
    const perBlock = blocks.map((block) => {
      const l = split(block.library);
      const s = split(block.server);
      return {
        allP50: ratio(s.all.p50Ms, l.all.p50Ms),
        firstQuestionP50: ratio(s.firstQuestion.p50Ms, l.firstQuestion.p50Ms),
        firstQuestionP95: ratio(s.firstQuestion.p95Ms, l.firstQuestion.p95Ms),
      };
    });
    console.log(
      JSON.stringify(
        {
          machine: {
            cores: os.availableParallelism(),
            threads: THREADS,
            turnsPerThread: TURNS,
            turnsAtOnce: MAX_TURNS,
            abbaBlocks: ROUNDS,
            serverProcess: SERVER_PER_BLOCK ? 'a fresh one per server block' : 'one for the whole run',
          },
          turnLatency: {
            library: lib,
            server: srv,
            ratio: {
              allP50: ratio(srv.all.p50Ms, lib.all.p50Ms),
              allP95: ratio(srv.all.p95Ms, lib.all.p95Ms),
              firstQuestionP50: ratio(srv.firstQuestion.p50Ms, lib.firstQuestion.p50Ms),
              firstQuestionP95: ratio(srv.firstQuestion.p95Ms, lib.firstQuestion.p95Ms),
              followUpExtraMsP50: round(srv.followUps.p50Ms - lib.followUps.p50Ms),
              perAbbaBlock: perBlock,
            },
            goal: 'server ≤ 1.1 × library',
            firstQuestionPhases: { library: phaseSplit(library), server: phaseSplit(server) },
          },
          serverEndToEndWithQueue: summary(serverEndToEnd),
          serverPeakRssMb: rssMb,
          errors,
          idleThread: idle,
          phases,
        },
        null,
        2,
      ),
    );
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

await main();
