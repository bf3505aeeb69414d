// npm run bench:thread — what a conversation costs beyond its model and cells.
//
// 1. Per-turn overhead of a follow-up: a thread whose first question replays
//    the student-loan run (8 rounds, 7 cells with their recorded outputs, so
//    the conversation has a realistic size), then follow-ups answered at once
//    by a zero-latency in-process model with no cells, in an in-memory
//    session. The wall time of each follow-up is the thread's own work:
//    question, context check, turn records on disk, events, turn result.
//    Baseline, alternating in the same run: the same question asked the
//    one-shot way (a new run: trace, sandbox, profile, first message).
// 2. Resume of a 10-cell thread through the real Docker sandbox: the time
//    from resumeThread() until the replay ends (trace read, a fresh session,
//    the 10 cells run again, outputs checked), next to the sum of the cells'
//    recorded times.
//
//    Baseline, alternating: a fresh session of the same workspace until its
//    first result (container start and the kernel importing pandas), the part
//    of a resume that is the sandbox's and not the replay's.
//
// Targets: follow-up overhead ≤ 5 ms; resume ≤ sum of cell times + 1 s.
// Prints one JSON document.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { analyze } from '../src/agent/analyze.ts';
import type { LanguageModel, ModelChunk } from '../src/agent/language-model.ts';
import { openThread, resumeThread } from '../src/agent/thread/index.ts';
import { createSandbox } from '../src/sandbox/index.ts';
import { readTrace } from '../src/trace/reader.ts';
import { createFakeSandbox, printed } from '../test/agent/support/fake-session.ts';
import { loadStudentLoanTrajectory } from '../test/agent/support/student-loan.ts';

const trajectory = loadStudentLoanTrajectory();

/** A zero-latency model: replays `turns` in order (8-character chunks, like tokens), then answers every request at once. */
function scriptedModel(turns: readonly string[]): LanguageModel {
  let index = 0;
  return {
    id: 'zero-latency',
    contextWindowTokens: 10_000_000,
    async *stream(request): AsyncGenerator<ModelChunk> {
      await Promise.resolve();
      const full = turns[index] ?? '<Answer>Ok: 42.</Answer>';
      index += 1;
      const stopAt = full.indexOf('</Code>');
      const text = stopAt === -1 ? full : full.slice(0, stopAt + '</Code>'.length);
      for (let offset = 0; offset < text.length; offset += 8)
        yield { type: 'text-delta', text: text.slice(offset, offset + 8) };
      yield {
        type: 'usage',
        promptTokens: request.messages.length * 100,
        completionTokens: Math.ceil(text.length / 4),
      };
      yield { type: 'finish', reason: 'stop' };
    },
  };
}

function stats(values: readonly number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) =>
    Number((sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0).toFixed(3));
  return { median: at(0.5), p95: at(0.95), max: Number((sorted.at(-1) ?? 0).toFixed(3)), n: sorted.length };
}

async function followUpOverhead(root: string, workspaceDir: string) {
  const outputs = trajectory.executeOutputs;
  const sandbox = createFakeSandbox({
    run: (_code, index) => printed(outputs[index % outputs.length] ?? ''),
  });
  const thread = await openThread({
    workspaceDir,
    outDir: path.join(root, 'follow-ups'),
    model: scriptedModel(trajectory.modelTurns),
    createSandbox: sandbox.factory,
  });
  const first = await thread.ask('Generate a data science report.').result;
  const followUpMs: number[] = [];
  const oneShotMs: number[] = [];
  const repeats = 100;
  for (let repeat = 0; repeat < repeats; repeat++) {
    // Alternating, so that the machine's load touches both alike.
    let started = performance.now();
    const result = await thread.ask(`Follow-up ${repeat}: and the total?`).result;
    followUpMs.push(performance.now() - started);
    if (result.termination.reason !== 'answered')
      throw new Error(`follow-up ended ${result.termination.reason}`);

    started = performance.now();
    await analyze({
      instruction: `Question ${repeat}: and the total?`,
      workspaceDir,
      outDir: path.join(root, `one-shot-${repeat}`),
      model: scriptedModel([]),
      createSandbox: createFakeSandbox().factory,
    });
    oneShotMs.push(performance.now() - started);
  }
  const summary = await thread.close();
  const followUps = stats(followUpMs.slice(5));
  const oneShot = stats(oneShotMs.slice(5));
  return {
    firstTurn: { rounds: first.rounds, cells: first.outputIds.length },
    conversationMessages: summary.rounds,
    followUpMs: followUps,
    oneShotRunMs: oneShot,
    ratioFollowUpToOneShot: Number((followUps.median / oneShot.median).toFixed(3)),
    targetMs: 5,
    met: followUps.median <= 5,
  };
}

const tenCells = Array.from({ length: 10 }, (_, index) =>
  [
    `<Analyze>Step ${index + 1}.</Analyze>`,
    '<Code>',
    index === 0
      ? "import pandas as pd, numpy as np, time\ndf = pd.read_csv('data.csv')\nprint(df.shape)"
      : `time.sleep(0.15)\ncol${index} = (df['value'] * ${index}).rolling(5).mean()\nprint(round(float(col${index}.sum()), 3))`,
    '</Code>',
  ].join('\n'),
);

async function resumeTime(root: string, workspaceDir: string) {
  const rows = Array.from({ length: 5000 }, (_, index) => `${index},${(index * 37) % 101}`);
  await writeFile(path.join(workspaceDir, 'data.csv'), `id,value\n${rows.join('\n')}\n`);
  const outDir = path.join(root, 'resume');
  const thread = await openThread({
    workspaceDir,
    outDir,
    model: scriptedModel([...tenCells, '<Answer>Done.</Answer>']),
  });
  const first = await thread.ask('Ten cells.').result;
  await thread.close();
  if (first.outputIds.length !== 10) throw new Error(`expected 10 cells, got ${first.outputIds.length}`);
  const trace = await readTrace(path.join(outDir, 'trace.jsonl'));
  const sumCellMs = trace.records.reduce(
    (sum, record) => sum + (record.type === 'execution' ? record.result.durationMs : 0),
    0,
  );
  const runs = [];
  for (let repeat = 0; repeat < 3; repeat++) {
    const started = performance.now();
    const resumed = await resumeThread(outDir, { model: scriptedModel([]) });
    let replayEndMs = 0;
    let mismatches = -1;
    let replayMs = 0;
    for await (const event of resumed.ask(`Again ${repeat}?`)) {
      if (event.type === 'replay-end') {
        replayEndMs = performance.now() - started;
        mismatches = event.summary.mismatches.length;
        replayMs = event.summary.durationMs;
      }
    }
    await resumed.close();
    // Baseline, alternating: a fresh session of the same workspace until its first (trivial) result.
    const baselineStarted = performance.now();
    const session = await createSandbox({ workspaceDir });
    await session.execute('1');
    const freshSessionMs = performance.now() - baselineStarted;
    await session.close();
    runs.push({
      freshSessionMs: Math.round(freshSessionMs),
      overheadOverCellsMs: Math.round(replayEndMs - sumCellMs),
      resumeMs: Math.round(replayEndMs),
      sessionStartMs: Math.round(replayEndMs - replayMs),
      replayMs: Math.round(replayMs),
      mismatches,
    });
  }
  const worst = Math.max(...runs.map((run) => run.resumeMs));
  return {
    cells: 10,
    sumCellMs: Math.round(sumCellMs),
    runs,
    targetMs: Math.round(sumCellMs + 1000),
    met: worst <= sumCellMs + 1000,
  };
}

const root = await mkdtemp(path.join(os.tmpdir(), 'datalyst-bench-thread-'));
try {
  const workspaceDir = path.join(root, 'workspace');
  await import('node:fs/promises').then((fs) => fs.mkdir(workspaceDir));
  await writeFile(path.join(workspaceDir, 'sales.csv'), 'region,revenue\nnorth,10\nsouth,20\n');
  const followUps = await followUpOverhead(root, workspaceDir);
  const resume = await resumeTime(root, workspaceDir);
  process.stdout.write(
    `${JSON.stringify({ machine: { cpus: os.cpus().length, load: os.loadavg().map((value) => Number(value.toFixed(2))) }, followUps, resume }, null, 2)}\n`,
  );
} finally {
  await rm(root, { recursive: true, force: true });
}
