// npm run bench:server-cpu — the CPU `datalyst serve` spends per turn, against the library's.
//
// bench:server compares latencies, which on a busy 2-core machine swing with
// whatever else runs; CPU seconds do not (much). Here the same turns of the
// offline analyst (K threads × 3 questions, one turn at a time by default) run
//   library  — openThread/ask in this process: its CPU (process.cpuUsage(), all
//              its threads) per turn;
//   server   — `datalyst serve --offline --warm 0` in its own process, driven over
//              HTTP (POST a turn, follow its SSE events to turn-done): the server
//              process's CPU per turn (its threads' run time from
//              /proc/<pid>/task/*/schedstat, ns: the thread pool, V8's compiler
//              and GC threads count; /proc/<pid>/stat's ticks for the whole round
//              beside it; its child processes, the chart workers, apart), and
//              this process's CPU as the HTTP client;
//   baseline — the same server from another checkout (BENCH_BASELINE_DIR), to
//              measure a change: BENCH_SIDES=baseline,server.
// Each round's CPU is also split by thread (main, and the rest: `node`).
// Rounds alternate ABBA (BENCH_SIDES, default library,server) BENCH_ROUNDS
// times (default 2), each side warmed first with BENCH_WARM_THREADS threads of
// 3 questions (default 1, not measured). The library's rounds share this
// process, so its later rounds run warmer code than a freshly started server's
// (bench:server has the same asymmetry). One turn at a time (BENCH_AT_ONCE=1,
// default), a turn's CPU is read from just before its POST (or ask) to just
// after its end and a short settle (BENCH_SETTLE_MS, default 30: what the turn
// set going in the background lands in it), split into first questions and
// follow-ups; with BENCH_AT_ONCE=2 only round totals mean anything.
// BENCH_CPU_PROFILE_DIR: a V8 CPU profile of each round's measured turns (the
// server's through bench/cpu-profile-on-signal.mjs). Prints one JSON document.
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createOfflineAnalyst, openThread } from '../src/index.ts';
import {
  QUESTIONS,
  followTurn,
  csv,
  processCpuMs,
  quantile,
  startServe,
  type ServeProcess,
} from './support/serve-process.ts';

const THREADS = Number(process.env.BENCH_THREADS ?? 8);
const TURNS = Number(process.env.BENCH_TURNS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const AT_ONCE = Number(process.env.BENCH_AT_ONCE ?? 1);
/**
 * The two sides compared (ABBA): `library`, `server` (this tree's), `baseline` (the server of another checkout,
 * BENCH_BASELINE_DIR, e.g. `git archive <commit>` unpacked beside a node_modules link: a change's effect on the
 * server's CPU measured in one run). One side alone runs twice per block.
 */
const SIDES = (process.env.BENCH_SIDES ?? 'library,server').split(',') as Side[];
type Side = 'library' | 'server' | 'baseline';
const BASELINE_DIR = process.env.BENCH_BASELINE_DIR;
/** Threads of 3 questions each side answers first, not measured (1: the JIT still warming, as in bench:server). */
const WARM_THREADS = Number(process.env.BENCH_WARM_THREADS ?? 1);
const SETTLE_MS = Number(process.env.BENCH_SETTLE_MS ?? 30);
/** Where to write a CPU profile of each server round's measured turns (bench/cpu-profile-on-signal.mjs); none by default. */
const PROFILE_DIR = process.env.BENCH_CPU_PROFILE_DIR;
const SERVE_NODE_ARGS =
  PROFILE_DIR === undefined
    ? []
    : ['--import', new URL('./cpu-profile-on-signal.mjs', import.meta.url).pathname];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ms1 = (value: number): number => Math.round(value * 10) / 10;
const mean = (values: readonly number[]): number =>
  values.reduce((sum, value) => sum + value, 0) / Math.max(1, values.length);

/** CPU ms of one turn, by its index in its thread (0: first question). */
interface TurnCpu {
  turn: number;
  cpuMs: number;
  /** The HTTP client's CPU (this process) on the server side. */
  clientMs?: number;
  wallMs: number;
}

const cpuMsHere = (): number => {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
};

/** CPU ms (ns precision) the process has used, summed over its live threads. */
async function schedCpuMs(pid: number): Promise<number> {
  const tasks = await readdir(`/proc/${pid}/task`);
  let ns = 0;
  for (const task of tasks) {
    const text = await readFile(`/proc/${pid}/task/${task}/schedstat`, 'utf8').catch(() => '0');
    ns += Number(text.split(' ')[0]);
  }
  return ns / 1e6;
}

/** CPU ms of the process's live threads by thread name (main, libuv's pool, workers, V8's GC helpers). */
async function threadCpuMs(pid: number): Promise<Map<string, number>> {
  const byName = new Map<string, number>();
  for (const task of await readdir(`/proc/${pid}/task`)) {
    const [name, stat] = await Promise.all([
      readFile(`/proc/${pid}/task/${task}/comm`, 'utf8').catch(() => '?'),
      readFile(`/proc/${pid}/task/${task}/schedstat`, 'utf8').catch(() => '0'),
    ]);
    const key = Number(task) === pid ? 'main' : name.trim();
    byName.set(key, (byName.get(key) ?? 0) + Number(stat.split(' ')[0]) / 1e6);
  }
  return byName;
}

/**
 * CPU ms (10 ms ticks) of the process's child processes (the report's chart workers, which the server starts to
 * draw a cell's charts): the live ones and their children, and those reaped.
 */
async function childrenCpuMs(pid: number): Promise<number> {
  const stats = new Map<number, string[]>();
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const fields = (await readFile(`/proc/${name}/stat`, 'utf8').catch(() => '')).split(') ')[1]?.split(' ');
    if (fields !== undefined) stats.set(Number(name), fields);
  }
  const ticks = (fields: string[] | undefined, from: number) =>
    fields === undefined ? 0 : Number(fields[from]) + Number(fields[from + 1]);
  // Reaped children (cutime, cstime), then the live descendants' own and reaped.
  let total = ticks(stats.get(pid), 13);
  const parents = new Set([pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const [child, fields] of stats) {
      if (parents.has(child) || !parents.has(Number(fields[1]))) continue;
      parents.add(child);
      total += ticks(fields, 11) + ticks(fields, 13);
      grew = true;
    }
  }
  return total * 10;
}

/** Which of a process's threads used the round's CPU, per turn (a thread started during the round counts from 0). */
function perTurnByThread(from: Map<string, number>, to: Map<string, number>): Record<string, number> {
  const byThread: Record<string, number> = {};
  for (const [name, cpu] of to) {
    const used = cpu - (from.get(name) ?? 0);
    if (used >= 1) byThread[name] = ms1(used / (THREADS * TURNS));
  }
  return byThread;
}

/** A CPU profile of this process (the library's rounds) when BENCH_CPU_PROFILE_DIR is set. */
async function startProfile(): Promise<{ stop(name: string): Promise<void> } | null> {
  if (PROFILE_DIR === undefined) return null;
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', {
    interval: Number(process.env.BENCH_CPU_PROFILE_INTERVAL_US ?? 500),
  });
  await session.post('Profiler.start');
  return {
    async stop(name) {
      const { profile } = await session.post('Profiler.stop');
      await writeFile(
        path.join(PROFILE_DIR, `${name}-${process.pid}-${Date.now()}.cpuprofile`),
        JSON.stringify(profile),
      );
      session.disconnect();
    },
  };
}

/** Runs `count` tasks, at most AT_ONCE at a time, in order. */
async function inSlots(count: number, task: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(AT_ONCE, count) }, async () => {
      while (next < count) {
        const index = next;
        next += 1;
        await task(index);
      }
    }),
  );
}

async function libraryRound(workspaceDir: string, runsDir: string) {
  for (let index = 0; index < WARM_THREADS; index += 1) {
    const warm = await openThread({
      workspaceDir,
      model: createOfflineAnalyst(),
      outDir: path.join(runsDir, `warm-${index}-${Date.now()}`),
    });
    for (const question of QUESTIONS.slice(0, TURNS)) await warm.ask(question).result;
    await warm.close();
  }
  const turns: TurnCpu[] = [];
  const profile = await startProfile();
  const threadsFrom = await threadCpuMs(process.pid);
  const roundFrom = cpuMsHere();
  const threads = await Promise.all(
    Array.from({ length: THREADS }, (_, index) =>
      openThread({
        workspaceDir,
        model: createOfflineAnalyst(),
        outDir: path.join(runsDir, `library-${index}-${Date.now()}`),
      }),
    ),
  );
  const openMs = cpuMsHere() - roundFrom;
  // Thread by thread, turn by turn (as the server side), AT_ONCE threads at a time.
  try {
    await inSlots(THREADS, async (index) => {
      const thread = threads[index]!;
      for (let turn = 0; turn < TURNS; turn += 1) {
        const at = performance.now();
        const before = cpuMsHere();
        const asked = thread.ask(QUESTIONS[turn % QUESTIONS.length]!);
        // Its events read, as the server reads them.
        for await (const _event of asked);
        const result = await asked.result;
        if (['cancelled', 'model-unavailable', 'sandbox-failure'].includes(result.termination.reason))
          throw new Error(`library turn ended ${result.termination.reason}`);
        await sleep(SETTLE_MS);
        turns.push({ turn, cpuMs: cpuMsHere() - before, wallMs: performance.now() - at - SETTLE_MS });
      }
    });
  } finally {
    await Promise.all(threads.map((thread) => thread.close()));
  }
  const totalMs = cpuMsHere() - roundFrom;
  const byThread = perTurnByThread(threadsFrom, await threadCpuMs(process.pid));
  await profile?.stop('library');
  return { turns, openMs, totalMs, byThread };
}

function startServerRound(dataDir: string, checkout: string): Promise<ServeProcess> {
  return startServe(dataDir, ['--warm', '0', '--max-turns', String(Math.max(2, AT_ONCE))], {
    checkout,
    nodeArgs: SERVE_NODE_ARGS,
  });
}

async function serverRound(csvPath: string, dataDir: string, checkout: string) {
  const server = await startServerRound(dataDir, checkout);
  const post = async (url: string, body: unknown) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  try {
    const form = new FormData();
    form.append('file', new Blob([await readFile(csvPath)]), 'sales.csv');
    const file = (await (await fetch(`${server.url}/v1/files`, { method: 'POST', body: form })).json()) as {
      id: string;
    };
    const newThread = async () =>
      ((await (await post(`${server.url}/v1/threads`, { file_ids: [file.id] })).json()) as { id: string }).id;
    const ask = async (threadId: string, turn: number) => {
      const response = await post(`${server.url}/v1/threads/${threadId}/turns`, {
        question: QUESTIONS[turn % QUESTIONS.length],
      });
      if (response.status !== 202) throw new Error(`POST turn: ${response.status} ${await response.text()}`);
      const { status } = await followTurn(((await response.json()) as { events_url: string }).events_url);
      if (status !== 'finished') throw new Error(`server turn ended ${status}`);
    };
    for (let index = 0; index < WARM_THREADS; index += 1) {
      const warm = await newThread();
      for (let turn = 0; turn < TURNS; turn += 1) await ask(warm, turn);
      await fetch(`${server.url}/v1/threads/${warm}`, { method: 'DELETE' });
    }
    await sleep(200);
    const turns: TurnCpu[] = [];
    const threadsFrom = await threadCpuMs(server.pid);
    const roundFrom = {
      sched: await schedCpuMs(server.pid),
      stat: await processCpuMs(server.pid),
      children: await childrenCpuMs(server.pid),
      here: cpuMsHere(),
    };
    // The profile (BENCH_CPU_PROFILE_DIR) covers the measured turns only.
    if (PROFILE_DIR !== undefined) process.kill(server.pid, 'SIGUSR2');
    const threadIds: string[] = [];
    for (let index = 0; index < THREADS; index += 1) threadIds.push(await newThread());
    const openMs = (await schedCpuMs(server.pid)) - roundFrom.sched;
    await inSlots(THREADS, async (index) => {
      for (let turn = 0; turn < TURNS; turn += 1) {
        const at = performance.now();
        const before = await schedCpuMs(server.pid);
        const clientBefore = cpuMsHere();
        await ask(threadIds[index]!, turn);
        await sleep(SETTLE_MS);
        turns.push({
          turn,
          cpuMs: (await schedCpuMs(server.pid)) - before,
          clientMs: cpuMsHere() - clientBefore,
          wallMs: performance.now() - at - SETTLE_MS,
        });
      }
    });
    const totalMs = (await schedCpuMs(server.pid)) - roundFrom.sched;
    const totalStatMs = (await processCpuMs(server.pid)) - roundFrom.stat;
    const childrenMs = (await childrenCpuMs(server.pid)) - roundFrom.children;
    const byThread = perTurnByThread(threadsFrom, await threadCpuMs(server.pid));
    if (PROFILE_DIR !== undefined) {
      process.kill(server.pid, 'SIGUSR2');
      await sleep(1000);
    }
    return {
      turns,
      openMs,
      totalMs,
      totalStatMs,
      childrenMs,
      byThread,
      clientTotalMs: cpuMsHere() - roundFrom.here,
    };
  } finally {
    await server.stop();
  }
}

const describe = (turns: readonly TurnCpu[], pick: (turn: TurnCpu) => number | undefined) => {
  const values = turns.map(pick).filter((value): value is number => value !== undefined);
  return { meanMs: ms1(mean(values)), p50Ms: ms1(quantile(values, 0.5)), n: values.length };
};
const splitTurns = (turns: readonly TurnCpu[], pick: (turn: TurnCpu) => number | undefined) => ({
  all: describe(turns, pick),
  first: describe(
    turns.filter((turn) => turn.turn === 0),
    pick,
  ),
  followUps: describe(
    turns.filter((turn) => turn.turn > 0),
    pick,
  ),
});

async function main(): Promise<void> {
  // Made once for both writers: this process's library rounds and the server's signal hook (any side first).
  if (PROFILE_DIR !== undefined) await mkdir(PROFILE_DIR, { recursive: true });
  const root = await mkdtemp(path.join(os.tmpdir(), 'datalyst-bench-server-cpu-'));
  const workspaceDir = path.join(root, 'workspace');
  await mkdir(workspaceDir);
  const csvPath = path.join(workspaceDir, 'sales.csv');
  await writeFile(csvPath, csv);
  const samples: Record<Side, TurnCpu[]> = { library: [], server: [], baseline: [] };
  const rounds: Record<string, unknown>[] = [];
  if (SIDES.includes('baseline') && BASELINE_DIR === undefined)
    throw new Error('BENCH_SIDES=baseline needs BENCH_BASELINE_DIR');
  try {
    const [a, b = a] = SIDES as [Side, Side?];
    const order = Array.from({ length: ROUNDS }, () => [a, b, b, a]).flat();
    for (const [index, kind] of order.entries()) {
      const turnsPerRound = THREADS * TURNS;
      if (kind === 'library') {
        const result = await libraryRound(workspaceDir, path.join(root, 'runs'));
        samples.library.push(...result.turns);
        rounds.push({
          kind,
          cpuPerTurnMs: splitTurns(result.turns, (turn) => turn.cpuMs),
          threadOpenMs: ms1(result.openMs),
          roundCpuPerTurnMs: ms1(result.totalMs / turnsPerRound),
          cpuPerTurnByThreadMs: result.byThread,
        });
      } else {
        const checkout = kind === 'baseline' ? (BASELINE_DIR as string) : process.cwd();
        const result = await serverRound(csvPath, path.join(root, `data-${index}`), checkout);
        samples[kind].push(...result.turns);
        rounds.push({
          kind,
          cpuPerTurnMs: splitTurns(result.turns, (turn) => turn.cpuMs),
          clientCpuPerTurnMs: splitTurns(result.turns, (turn) => turn.clientMs),
          threadCreateMs: ms1(result.openMs),
          roundCpuPerTurnMs: ms1(result.totalMs / turnsPerRound),
          roundStatCpuPerTurnMs: ms1(result.totalStatMs / turnsPerRound),
          cpuPerTurnByThreadMs: result.byThread,
          childProcessesCpuPerTurnMs: ms1(result.childrenMs / turnsPerRound),
          clientRoundCpuPerTurnMs: ms1(result.clientTotalMs / turnsPerRound),
        });
      }
      console.error(`[bench:server-cpu] ${JSON.stringify(rounds.at(-1))}`);
    }
    const cpu = Object.fromEntries(
      SIDES.map((side) => [side, splitTurns(samples[side], (turn) => turn.cpuMs)]),
    ) as Partial<Record<Side, ReturnType<typeof splitTurns>>>;
    const [first, second] = [cpu[b], cpu[a]];
    console.log(
      JSON.stringify(
        {
          machine: { cores: os.availableParallelism(), load: os.loadavg().map(ms1) },
          config: {
            sides: SIDES,
            warmThreads: WARM_THREADS,
            threads: THREADS,
            turnsPerThread: TURNS,
            abbaBlocks: ROUNDS,
            atOnce: AT_ONCE,
            settleMs: SETTLE_MS,
          },
          cpuPerTurnMs: {
            ...cpu,
            ...(samples.server.length > 0
              ? { serverClient: splitTurns(samples.server, (turn) => turn.clientMs) }
              : {}),
            ...(a !== b && first !== undefined && second !== undefined
              ? {
                  [`${b}Minus${a[0]?.toUpperCase()}${a.slice(1)}`]: {
                    allMean: ms1(first.all.meanMs - second.all.meanMs),
                    firstMean: ms1(first.first.meanMs - second.first.meanMs),
                    followUpsMean: ms1(first.followUps.meanMs - second.followUps.meanMs),
                    followUpsP50: ms1(first.followUps.p50Ms - second.followUps.p50Ms),
                  },
                }
              : {}),
          },
          wallPerTurnMs: Object.fromEntries(
            SIDES.map((side) => [side, splitTurns(samples[side], (turn) => turn.wallMs)]),
          ),
          rounds,
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
