// npm run bench:deep — the offline deep analysis of the student-loan example
// with 4 sub-analyses, run at once against the same run with the same 4
// sub-analyses one after another, in one process, alternating.
//
// The run is the engine's (`deepAnalyze` with the offline analyst: the offline
// roles; each sub-analysis an ordinary thread in its own Docker session; the
// evidence, outline, sections and deep.json). Every mode's sessions are
// started before the clock (see once()), so the figure is the deep run's own:
// the profile, the four sub-analyses, the assembly and deep.json. The report
// is not rendered.
//
// Modes: one after another (1 at once), 2 at once (the default on this
// 2-core machine: one per core), 4 at once. Goal: at once ≤ 0.6× of one
// after another. Prints one JSON document and a summary line.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createSandbox } from '../src/sandbox/index.ts';
import type { SandboxSession } from '../src/sandbox/index.ts';
import { sharedChartPool } from '../src/report/index.ts';
import { createOfflineAnalyst } from '../src/agent/index.ts';
import { deepAnalyze } from '../src/deep/index.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const workspaceDir = path.join(repoRoot, 'workspace-examples', 'student-loan');
const rounds = Number(process.env.BENCH_DEEP_ROUNDS ?? 2);
const subAnalyses = 4;
const modes = [1, 2, 4] as const;

interface Sample {
  concurrency: number;
  wallMs: number;
  /** Sum of the sub-analyses' own wall times. */
  subSumMs: number;
  /** Sessions the run took (all started before the clock). */
  sessionsUsed: number;
  evidence: number;
  sections: number;
}

async function once(root: string, concurrency: number, index: number): Promise<Sample> {
  // Every session the run takes (one profiles the workspace and then serves the first sub-analysis, one per
  // other sub-analysis) is started before the clock. Not a warm pool: a pool starts a replacement for each
  // session it hands out, and on 2 cores those starts (~0.5 s of CPU each) took a third of the machine
  // during the measured run, in both modes, for sessions nobody used.
  // Warm as a warm pool hands them out: createSandbox returns once the kernel's supervisor is up, before its
  // worker has imported pandas; without the empty cell the four imports (~0.5 s of CPU each) ran inside the
  // measured window, in both modes, on 2 cores.
  const ready: SandboxSession[] = await Promise.all(
    Array.from({ length: subAnalyses }, async () => {
      const session = await createSandbox({ workspaceDir });
      await session.execute('');
      return session;
    }),
  );
  const handedOut = { count: 0 };
  try {
    const started = performance.now();
    const { record } = await deepAnalyze({
      instruction: 'Generate a data science report.',
      workspaceDir,
      model: createOfflineAnalyst(),
      outDir: path.join(root, `deep-${concurrency}-${index}`),
      maxSubAnalyses: subAnalyses,
      concurrency,
      createSandbox: () => {
        const session = ready.shift();
        if (session === undefined)
          return Promise.reject(new Error('The run asked for more sessions than it has sub-analyses.'));
        handedOut.count += 1;
        return Promise.resolve(session);
      },
    });
    const wallMs = performance.now() - started;
    if (
      record.termination.reason !== 'answered' ||
      record.subAnalyses.some((sub) => sub.outcome !== 'answered')
    )
      throw new Error(`The deep run did not answer: ${record.termination.detail}`);
    return {
      concurrency,
      wallMs,
      subSumMs: record.subAnalyses.reduce(
        (sum, sub) => sum + Date.parse(sub.endedAt ?? '') - Date.parse(sub.startedAt ?? ''),
        0,
      ),
      sessionsUsed: handedOut.count,
      evidence: record.evidence.length,
      sections: record.sections.length,
    };
  } finally {
    await Promise.all(ready.map((session) => session.close()));
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? 0)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

const root = await mkdtemp(path.join(os.tmpdir(), 'datalyst-bench-deep-'));
const samples: Sample[] = [];
try {
  for (let round = 0; round < rounds; round += 1) {
    // Alternating, and the order turned round every other round.
    const order = round % 2 === 0 ? modes : [...modes].reverse();
    for (const concurrency of order) samples.push(await once(root, concurrency, round));
  }
} finally {
  await rm(root, { recursive: true, force: true });
  await sharedChartPool().close();
}

const byMode = Object.fromEntries(
  modes.map((concurrency) => {
    const mine = samples.filter((sample) => sample.concurrency === concurrency);
    return [
      `${concurrency} at once`,
      {
        wallMs: mine.map((sample) => Math.round(sample.wallMs)),
        medianWallMs: Math.round(median(mine.map((sample) => sample.wallMs))),
        medianSubAnalysisSumMs: Math.round(median(mine.map((sample) => sample.subSumMs))),
        sessionsUsed: mine.map((sample) => sample.sessionsUsed),
        evidence: mine.map((sample) => sample.evidence),
        sections: mine.map((sample) => sample.sections),
      },
    ];
  }),
);
const sequential = median(
  samples.filter((sample) => sample.concurrency === 1).map((sample) => sample.wallMs),
);
const ratio = (concurrency: number): number =>
  Number(
    (
      median(samples.filter((sample) => sample.concurrency === concurrency).map((sample) => sample.wallMs)) /
      sequential
    ).toFixed(3),
  );
console.log(
  JSON.stringify(
    {
      machine: { cores: os.availableParallelism(), node: process.version },
      workspace: 'workspace-examples/student-loan',
      subAnalyses,
      rounds,
      modes: byMode,
      ratio: { '2 at once / 1 at once': ratio(2), '4 at once / 1 at once': ratio(4) },
      goal: '≤ 0.6',
    },
    null,
    2,
  ),
);
console.log(
  `deep run, 4 sub-analyses: 2 at once ${ratio(2)}× and 4 at once ${ratio(4)}× the wall time of one after another (goal ≤ 0.6×)`,
);
