// npm run bench:agent — the agent loop's own cost.
//
// 1. Overhead per round: a zero-latency in-process model replays the
//    student-loan model turns (streamed in 8-character chunks, like tokens) and
//    an in-memory session answers every cell at once with the recorded output.
//    Everything the wall clock shows is the loop: parsing, events, messages,
//    token estimates, trace lines on disk. The same again with the model behind
//    the fake OpenAI server over loopback HTTP (adds the SDK and SSE parsing).
// 2. The student-loan replay end to end through the real Docker sandbox, its
//    wall time next to the sum of its cell times and the sandbox's own start,
//    profile, file copy and close times.
//
// Targets: overhead ≤ 2 ms per round, and ≤ 5 % of the replay's wall time.
// Prints one JSON document.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { streamAnalysis } from '../src/agent/analyze.ts';
import type { SandboxFactory } from '../src/agent/analyze-options.ts';
import type { AgentEvent } from '../src/agent/events.ts';
import type { LanguageModel, ModelChunk } from '../src/agent/language-model.ts';
import { createOpenAIChatModel } from '../src/agent/openai-chat-model.ts';
import { createSandbox } from '../src/sandbox/index.ts';
import type { SandboxSession } from '../src/sandbox/index.ts';
import { readTrace } from '../src/trace/reader.ts';
import { startFakeOpenAIServer } from '../test/support/fake-openai-server.ts';
import { createFakeSandbox, printed } from '../test/agent/support/fake-session.ts';
import { loadStudentLoanTrajectory, studentLoanDataDir } from '../test/agent/support/student-loan.ts';

const trajectory = loadStudentLoanTrajectory();
const codeTurns = trajectory.modelTurns.slice(0, -1);
const answerTurn = trajectory.modelTurns.at(-1) ?? '<Answer>done</Answer>';

/** Replays turns with no latency at all; the last round answers. */
function scriptedModel(rounds: number): LanguageModel {
  let turn = 0;
  return {
    id: 'zero-latency',
    contextWindowTokens: 10_000_000,
    async *stream(request): AsyncGenerator<ModelChunk> {
      await Promise.resolve();
      turn += 1;
      const full = turn >= rounds ? answerTurn : (codeTurns[(turn - 1) % codeTurns.length] ?? '');
      const stopAt = full.indexOf('</Code>');
      const text = stopAt === -1 ? full : full.slice(0, stopAt + '</Code>'.length);
      for (let offset = 0; offset < text.length; offset += 8) {
        yield { type: 'text-delta', text: text.slice(offset, offset + 8) };
      }
      yield {
        type: 'usage',
        promptTokens: request.messages.length * 100,
        completionTokens: Math.ceil(text.length / 4),
      };
      yield { type: 'finish', reason: 'stop' };
    },
  };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

async function drain(events: AsyncIterable<AgentEvent>): Promise<{ rounds: number; events: number }> {
  let rounds = 0;
  let count = 0;
  for await (const event of events) {
    count += 1;
    if (event.type === 'run-end') rounds = event.result.rounds;
  }
  return { rounds, events: count };
}

async function loopOverhead(runsDir: string, viaHttp: boolean) {
  const rounds = 30;
  const repeats = viaHttp ? 10 : 30;
  const perRoundMs: number[] = [];
  // CPU time of this process: what the loop costs, less disturbed than wall
  // time by other work on the machine (the fake HTTP server, when used, runs
  // in this process too and is counted).
  const perRoundCpuMs: number[] = [];
  let events = 0;
  const server = viaHttp
    ? await startFakeOpenAIServer({
        script: [],
        whenExhausted: { type: 'text', text: codeTurns[0] ?? '', chunkChars: 8, usage: 'auto' },
      })
    : null;
  try {
    for (let repeat = 0; repeat < repeats + 3; repeat += 1) {
      const sandbox = createFakeSandbox({
        run: (_code, index) =>
          printed(trajectory.executeOutputs[index % trajectory.executeOutputs.length] ?? ''),
      });
      const model =
        server === null
          ? scriptedModel(rounds)
          : createOpenAIChatModel({
              baseUrl: server.baseUrl,
              model: 'zero-latency',
              contextWindowTokens: 10_000_000,
            });
      const started = performance.now();
      const cpuStarted = process.cpuUsage();
      const outcome = await drain(
        streamAnalysis({
          instruction: trajectory.instruction,
          workspaceDir: studentLoanDataDir,
          model,
          createSandbox: sandbox.factory,
          outDir: path.join(runsDir, `${viaHttp ? 'http' : 'inproc'}-${repeat}`),
          maxRounds: rounds,
        }),
      );
      const elapsed = performance.now() - started;
      const cpu = process.cpuUsage(cpuStarted);
      // The first runs warm up the JIT and the file cache.
      if (repeat >= 3) {
        perRoundMs.push(elapsed / outcome.rounds);
        perRoundCpuMs.push((cpu.user + cpu.system) / 1000 / outcome.rounds);
      }
      events = outcome.events;
    }
  } finally {
    await server?.close();
  }
  return {
    model: viaHttp ? 'fake OpenAI server over loopback HTTP' : 'in-process, zero latency',
    roundsPerRun: rounds,
    runs: perRoundMs.length,
    eventsPerRun: events,
    overheadPerRoundMs: {
      median: round3(median(perRoundMs)),
      min: round3(Math.min(...perRoundMs)),
      max: round3(Math.max(...perRoundMs)),
    },
    cpuPerRoundMs: { median: round3(median(perRoundCpuMs)), min: round3(Math.min(...perRoundCpuMs)) },
  };
}

const round3 = (value: number) => Math.round(value * 1000) / 1000;

/** Wraps the real session to time what the sandbox itself spends outside cells. */
function timedSandbox(times: {
  createMs: number;
  profileMs: number;
  readFilesMs: number;
  closeMs: number;
}): SandboxFactory {
  return async (options) => {
    const started = performance.now();
    const session = await createSandbox(options);
    times.createMs += performance.now() - started;
    const timed: SandboxSession = {
      id: session.id,
      backend: session.backend,
      limits: session.limits,
      execute: (code, executeOptions) => session.execute(code, executeOptions),
      async profileWorkspace(profileOptions) {
        const begin = performance.now();
        try {
          return await session.profileWorkspace(profileOptions);
        } finally {
          times.profileMs += performance.now() - begin;
        }
      },
      async readFiles(paths, readOptions) {
        const begin = performance.now();
        try {
          return await session.readFiles(paths, readOptions);
        } finally {
          times.readFilesMs += performance.now() - begin;
        }
      },
      async close() {
        const begin = performance.now();
        try {
          await session.close();
        } finally {
          times.closeMs += performance.now() - begin;
        }
      },
      [Symbol.asyncDispose]: () => session.close(),
    };
    return timed;
  };
}

async function studentLoanReplay(runsDir: string) {
  const server = await startFakeOpenAIServer({
    script: trajectory.modelTurns.map((text) => ({ type: 'text' as const, text, chunkChars: 8 })),
  });
  const times = { createMs: 0, profileMs: 0, readFilesMs: 0, closeMs: 0 };
  const outDir = path.join(runsDir, 'replay');
  try {
    const started = performance.now();
    await drain(
      streamAnalysis({
        instruction: trajectory.instruction,
        workspaceDir: studentLoanDataDir,
        model: createOpenAIChatModel({ baseUrl: server.baseUrl, model: 'DeepAnalyze-8B' }),
        profile: 'deepanalyze',
        createSandbox: timedSandbox(times),
        outDir,
      }),
    );
    const wallMs = performance.now() - started;
    const { records } = await readTrace(path.join(outDir, 'trace.jsonl'));
    let cellsMs = 0;
    let modelMs = 0;
    let cells = 0;
    for (const record of records) {
      if (record.type === 'execution') {
        cellsMs += record.result.durationMs;
        cells += 1;
      }
      if (record.type === 'model-turn') modelMs += record.durationMs;
    }
    const end = records.at(-1);
    const sandboxMs = times.createMs + times.profileMs + times.readFilesMs + times.closeMs;
    // What is left once the cells, the (fake) model's turns and the sandbox's
    // own work are taken out. Cell durations are the kernel's; the host-side
    // round trip of each cell (stdio, JSON, validation) stays in the overhead.
    const loopOverheadMs = wallMs - cellsMs - modelMs - sandboxMs;
    return {
      termination: end?.type === 'run-end' ? end.termination.reason : 'none',
      cells,
      wallMs: Math.round(wallMs),
      sumOfCellMs: Math.round(cellsMs),
      modelTurnsMs: Math.round(modelMs),
      sandbox: {
        createMs: Math.round(times.createMs),
        profileMs: Math.round(times.profileMs),
        copyArtifactsMs: Math.round(times.readFilesMs),
        closeMs: Math.round(times.closeMs),
      },
      loopOverheadMs: Math.round(loopOverheadMs),
      loopOverheadShareOfWall: round3(loopOverheadMs / wallMs),
      cellShareOfWall: round3(cellsMs / wallMs),
    };
  } finally {
    await server.close();
  }
}

const runsDir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-bench-agent-'));
try {
  const inProcess = await loopOverhead(runsDir, false);
  const overHttp = await loopOverhead(runsDir, true);
  // `--no-replay` skips the Docker part (for quick runs while working on the loop).
  const replay = process.argv.includes('--no-replay') ? null : await studentLoanReplay(runsDir);
  const report = {
    benchmark: 'agent loop',
    node: process.version,
    cpus: os.cpus().length,
    // Other work on the machine inflates wall times; CPU times hold up better.
    loadAverageAtEnd: os.loadavg().map((load) => Math.round(load * 100) / 100),
    loopOverhead: inProcess,
    loopOverheadWithHttpModel: overHttp,
    studentLoanReplay: replay,
    targets: {
      overheadPerRoundMs: 2,
      overheadShareOfReplay: 0.05,
      metOverheadPerRoundWall: inProcess.overheadPerRoundMs.median <= 2,
      metOverheadPerRoundCpu: inProcess.cpuPerRoundMs.median <= 2,
      metReplayShare: replay === null ? null : replay.loopOverheadShareOfWall <= 0.05,
    },
  };
  console.log(JSON.stringify(report, null, 2));
} finally {
  await rm(runsDir, { recursive: true, force: true });
}
