// npm run bench:sandbox — what the Docker sandbox costs, against what peers do,
// measured in one run on this machine. Progress goes to stderr; the summary is
// one JSON object on stdout. Asserts nothing.
//
// 1. Rebuilding the runner image when only the kernel changed (a copy of
//    docker/python-runner with one kernel file edited, built under a throwaway tag).
// 2. Cold session start: createSandbox resolved, and until the kernel is ready
//    with pandas imported (the first cell has answered); with the student-loan
//    workspace too, and its profile.
// 3. Session start from the warm pool (acquire of a pre-started session).
// 4. A trivial cell on a warm session (host view and inside the kernel).
// 5. The baselines peers use, per cell, each importing pandas as a cell does:
//    a fresh `docker run --rm` per cell, and `docker exec <live container>
//    python3` per cell (DeepAnalyze's Docker mode); and the ratio baseline/ours.
// 6. 8 sessions × 20 cells at once: total time, errors (a wrong token counts).
// 7. runc against runsc (gVisor), side by side, rounds alternating which goes
//    first: ready with pandas, warm-pool acquire, a trivial cell, a groupby.
//    `npm run bench:sandbox -- --runtimes` runs this part alone.
//
// Targets (issue 3): trivial warm cell p50 ≤ 10 ms; ≥ 30× faster than the
// per-cell process baseline; pool start ≤ 50 ms; cold start ≤ 1.5 s; 0 errors.
// Issue 10: under runsc too, acquire from the warm pool ≤ 5 ms.
import { randomBytes } from 'node:crypto';
import { appendFile, cp, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { execa } from 'execa';
import {
  createSandbox,
  createWarmPool,
  ensureRunnerImage,
  sandboxRuntimeNames,
  type SandboxRuntimeName,
  type SandboxSession,
} from '../src/sandbox/index.ts';
import { LOCAL_BASE_IMAGE, REGISTRY_BASE_IMAGE, runnerImageDir } from '../src/sandbox/runner-image.ts';

const studentLoanDir = path.join(
  import.meta.dirname,
  '..',
  'test',
  'fixtures',
  'deepanalyze-student-loan',
  'data',
);

/** What every per-cell process has to do before it can run a pandas cell. */
const baselineCellCode = 'import pandas\nprint(1 + 1)';

interface Distribution {
  p50: number;
  p90: number;
  p95: number;
  min: number;
  max: number;
  n: number;
}

function percentile(values: readonly number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] ?? Number.NaN;
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

function distribution(values: readonly number[]): Distribution {
  return {
    p50: round(percentile(values, 0.5)),
    p90: round(percentile(values, 0.9)),
    p95: round(percentile(values, 0.95)),
    min: round(Math.min(...values)),
    max: round(Math.max(...values)),
    n: values.length,
  };
}

function progress(line: string): void {
  process.stderr.write(`${line}\n`);
}

function show(label: string, values: Distribution): void {
  progress(
    `${label.padEnd(52)} p50 ${values.p50} ms, p90 ${values.p90} ms, min ${values.min} ms (n=${values.n})`,
  );
}

async function baseImage(): Promise<string> {
  const local = await execa('docker', ['image', 'inspect', LOCAL_BASE_IMAGE], { reject: false });
  return local.exitCode === 0 ? LOCAL_BASE_IMAGE : REGISTRY_BASE_IMAGE;
}

async function imageRebuildMs(): Promise<number> {
  const copy = await mkdtemp(path.join(os.tmpdir(), 'datalyst-bench-image-'));
  const tag = 'datalyst/python-runner:bench-kernel-change';
  try {
    await cp(runnerImageDir, copy, { recursive: true });
    await appendFile(path.join(copy, 'kernel', 'worker.py'), `\n# bench ${Date.now()}\n`);
    const base = process.env['DATALYST_BASE_IMAGE'] ?? (await baseImage());
    const started = performance.now();
    await execa('docker', ['build', '-q', '--build-arg', `BASE=${base}`, '-t', tag, copy]);
    return performance.now() - started;
  } finally {
    await execa('docker', ['rmi', '-f', tag]).catch(() => {});
    await rm(copy, { recursive: true, force: true });
  }
}

async function coldStarts(runs: number) {
  const resolvedMs: number[] = [];
  const readyMs: number[] = [];
  const closeMs: number[] = [];
  for (let run = 0; run < runs; run++) {
    const started = performance.now();
    const session = await createSandbox();
    resolvedMs.push(performance.now() - started);
    // The first cell answers once the worker is up; importing pandas in it makes
    // "ready with pandas imported" true whatever the worker preloads.
    await session.execute('import pandas as pd\n1 + 1');
    readyMs.push(performance.now() - started);
    const closing = performance.now();
    await session.close();
    closeMs.push(performance.now() - closing);
  }
  return {
    resolvedMs: distribution(resolvedMs),
    readyMs: distribution(readyMs),
    closeMs: distribution(closeMs),
  };
}

async function workspaceStarts(runs: number) {
  const startMs: number[] = [];
  const profileMs: number[] = [];
  for (let run = 0; run < runs; run++) {
    const started = performance.now();
    const session = await createSandbox({ workspaceDir: studentLoanDir });
    startMs.push(performance.now() - started);
    const profiling = performance.now();
    await session.profileWorkspace();
    profileMs.push(performance.now() - profiling);
    await session.close();
  }
  return { startMs: distribution(startMs), profileMs: distribution(profileMs) };
}

async function poolStarts(runs: number) {
  const pool = createWarmPool({ size: 1 });
  const acquireMs: number[] = [];
  const firstCellMs: number[] = [];
  try {
    for (let run = 0; run < runs; run++) {
      // Wait for the pool to be full again, as it is between two users' runs.
      while (pool.stats.ready < 1) {
        if (pool.stats.starting === 0 && pool.stats.lastStartError) throw pool.stats.lastStartError;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const started = performance.now();
      const session = await pool.acquire();
      acquireMs.push(performance.now() - started);
      await session.execute('import pandas as pd\n1 + 1');
      firstCellMs.push(performance.now() - started);
      await session.close();
    }
    return {
      acquireMs: distribution(acquireMs),
      untilFirstCellMs: distribution(firstCellMs),
      stats: pool.stats,
    };
  } finally {
    await pool.close();
  }
}

async function warmCells(runs: number) {
  const session = await createSandbox();
  try {
    await session.execute('import pandas as pd');
    for (let warm = 0; warm < 20; warm++) await session.execute('1 + 1');
    const hostMs: number[] = [];
    const kernelMs: number[] = [];
    for (let run = 0; run < runs; run++) {
      const started = performance.now();
      const result = await session.execute('1 + 1');
      hostMs.push(performance.now() - started);
      kernelMs.push(result.durationMs);
    }
    // The same cell shape as the baselines, for a like-for-like ratio.
    const pandasCellMs: number[] = [];
    for (let run = 0; run < runs; run++) {
      const started = performance.now();
      await session.execute(baselineCellCode);
      pandasCellMs.push(performance.now() - started);
    }
    return {
      hostMs: distribution(hostMs),
      insideKernelMs: distribution(kernelMs),
      baselineShapedCellMs: distribution(pandasCellMs),
    };
  } finally {
    await session.close();
  }
}

/** A fresh container per cell (what a sandbox without a kernel does). */
async function dockerRunPerCell(image: string, runs: number): Promise<Distribution> {
  const times: number[] = [];
  for (let run = 0; run < runs; run++) {
    const started = performance.now();
    const result = await execa('docker', [
      'run',
      '--rm',
      '--network',
      'none',
      image,
      'python3',
      '-c',
      baselineCellCode,
    ]);
    times.push(performance.now() - started);
    if (result.stdout.trim() !== '2') throw new Error(`docker run baseline printed ${result.stdout}`);
  }
  return distribution(times);
}

/** A new Python process per cell inside one live container (DeepAnalyze's Docker mode). */
async function dockerExecPerCell(image: string, runs: number): Promise<Distribution> {
  const name = `datalyst-bench-exec-${randomBytes(4).toString('hex')}`;
  await execa('docker', [
    'run',
    '-d',
    '--rm',
    '--name',
    name,
    '--network',
    'none',
    image,
    'sleep',
    'infinity',
  ]);
  try {
    await execa('docker', ['exec', '-i', name, 'python3', '-'], { input: baselineCellCode });
    const times: number[] = [];
    for (let run = 0; run < runs; run++) {
      const started = performance.now();
      const result = await execa('docker', ['exec', '-i', name, 'python3', '-'], { input: baselineCellCode });
      times.push(performance.now() - started);
      if (result.stdout.trim() !== '2') throw new Error(`docker exec baseline printed ${result.stdout}`);
    }
    return distribution(times);
  } finally {
    await execa('docker', ['rm', '-f', name]).catch(() => {});
  }
}

async function concurrentSessions(sessionCount: number, cellsPerSession: number) {
  const sessions: SandboxSession[] = [];
  const started = performance.now();
  const errors: string[] = [];
  const cellMs: number[] = [];
  try {
    sessions.push(...(await Promise.all(Array.from({ length: sessionCount }, () => createSandbox()))));
    // Every kernel ready with pandas imported, so the cell timings are cells, not starts.
    await Promise.all(sessions.map((session) => session.execute('import pandas as pd')));
    const startedCells = performance.now();
    await Promise.all(
      sessions.map(async (session, sessionIndex) => {
        for (let cell = 0; cell < cellsPerSession; cell++) {
          const token = `s${sessionIndex}c${cell}${randomBytes(4).toString('hex')}`;
          const cellStarted = performance.now();
          try {
            const result = await session.execute(
              `import pandas as pd\ntotal = pd.Series(range(1000)).sum()\nprint('${token}')\n'${token}', int(total)`,
            );
            cellMs.push(performance.now() - cellStarted);
            if (
              result.status !== 'ok' ||
              result.stdout.text !== `${token}\n` ||
              result.value !== `('${token}', 499500)`
            )
              errors.push(
                `session ${sessionIndex} cell ${cell}: ${result.status} ${result.stdout.text.trim()}`,
              );
          } catch (error) {
            errors.push(`session ${sessionIndex} cell ${cell}: ${String(error)}`);
          }
        }
      }),
    );
    return {
      sessions: sessionCount,
      cellsPerSession,
      totalMsIncludingStarts: round(performance.now() - started),
      cellsTotalMs: round(performance.now() - startedCells),
      cellMs: distribution(cellMs),
      errors: errors.length,
      errorSamples: errors.slice(0, 5),
    };
  } finally {
    await Promise.all(sessions.map((session) => session.close()));
  }
}

/** 2 million rows, a thousand groups: a cell that does real work in the kernel. */
const groupbySetupCode =
  'import numpy as np, pandas as pd\nrng = np.random.default_rng(7)\nframe = pd.DataFrame({"k": rng.integers(0, 1000, 2_000_000), "v": rng.random(2_000_000)})';
const groupbyCode = 'frame.groupby("k")["v"].agg(["sum", "mean", "count"]).shape';

interface RuntimeSamples {
  readyMs: number[];
  acquireMs: number[];
  trivialCellMs: number[];
  groupbyMs: number[];
}

async function runtimeRound(runtime: SandboxRuntimeName, samples: RuntimeSamples): Promise<void> {
  const started = performance.now();
  const session = await createSandbox({ runtime });
  try {
    await session.execute('import pandas as pd\n1 + 1');
    samples.readyMs.push(performance.now() - started);
    for (let warm = 0; warm < 10; warm++) await session.execute('1 + 1');
    for (let run = 0; run < 50; run++) {
      const cellStarted = performance.now();
      await session.execute('1 + 1');
      samples.trivialCellMs.push(performance.now() - cellStarted);
    }
    const setup = await session.execute(groupbySetupCode);
    if (setup.status !== 'ok') throw new Error(`groupby setup under ${runtime}: ${setup.status}`);
    await session.execute(groupbyCode);
    for (let run = 0; run < 3; run++) {
      const cellStarted = performance.now();
      const result = await session.execute(groupbyCode);
      samples.groupbyMs.push(performance.now() - cellStarted);
      if (result.value !== '(1000, 3)') throw new Error(`groupby under ${runtime}: ${result.value}`);
    }
  } finally {
    await session.close();
  }
  // The warm pool, as a server keeps one: wait until it is full, then take a session.
  const pool = createWarmPool({ size: 1, runtime });
  try {
    for (let run = 0; run < 2; run++) {
      while (pool.stats.ready < 1) {
        if (pool.stats.starting === 0 && pool.stats.lastStartError) throw pool.stats.lastStartError;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const acquiring = performance.now();
      const pooled = await pool.acquire();
      samples.acquireMs.push(performance.now() - acquiring);
      await pooled.close();
    }
  } finally {
    await pool.close();
  }
}

/** runc and runsc in alternating order, round by round, so that load drifts hit both alike. */
async function compareRuntimes(rounds: number) {
  const samples = Object.fromEntries(
    sandboxRuntimeNames.map((runtime) => [
      runtime,
      { readyMs: [], acquireMs: [], trivialCellMs: [], groupbyMs: [] } as RuntimeSamples,
    ]),
  ) as Record<SandboxRuntimeName, RuntimeSamples>;
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? sandboxRuntimeNames : [...sandboxRuntimeNames].reverse();
    for (const runtime of order) {
      await runtimeRound(runtime, samples[runtime]);
      progress(`runtimes: round ${round + 1}/${rounds}, ${runtime} done`);
    }
  }
  const summarize = (runtime: SandboxRuntimeName) => ({
    readyWithPandasMs: distribution(samples[runtime].readyMs),
    poolAcquireMs: distribution(samples[runtime].acquireMs),
    trivialCellMs: distribution(samples[runtime].trivialCellMs),
    groupby2MRowsMs: distribution(samples[runtime].groupbyMs),
  });
  const runc = summarize('runc');
  const runsc = summarize('runsc');
  const rows: [string, keyof typeof runc][] = [
    ['ready with pandas imported', 'readyWithPandasMs'],
    ['warm-pool acquire', 'poolAcquireMs'],
    ['trivial cell (1 + 1)', 'trivialCellMs'],
    ['groupby, 2M rows x 1000 groups', 'groupby2MRowsMs'],
  ];
  progress(
    `${'p50 (ms)'.padEnd(34)}${'runc'.padStart(10)}${'runsc'.padStart(10)}${'runsc/runc'.padStart(12)}`,
  );
  for (const [label, key] of rows) {
    progress(
      `${label.padEnd(34)}${String(runc[key].p50).padStart(10)}${String(runsc[key].p50).padStart(10)}${String(round(runsc[key].p50 / runc[key].p50)).padStart(12)}`,
    );
  }
  return {
    rounds,
    runc,
    runsc,
    ratioRunscToRunc: Object.fromEntries(rows.map(([, key]) => [key, round(runsc[key].p50 / runc[key].p50)])),
    targets: { runscPoolAcquireP50AtMost5Ms: runsc.poolAcquireMs.p50 <= 5 },
  };
}

async function main(): Promise<void> {
  if (process.argv.includes('--runtimes')) {
    const { image } = await ensureRunnerImage({ onProgress: progress });
    progress(`runner image: ${image}`);
    await (await createSandbox()).close();
    const runtimes = await compareRuntimes(3);
    process.stdout.write(JSON.stringify({ image, runtimes }, null, 2) + '\n');
    return;
  }
  const { image } = await ensureRunnerImage({ onProgress: progress });
  progress(`runner image: ${image}`);

  const rebuildMs = round(await imageRebuildMs());
  progress(`image rebuild, only the kernel changed: ${rebuildMs} ms`);

  // One session first, so that the engine's caches are as warm as they will be.
  await (await createSandbox()).close();

  const cold = await coldStarts(9);
  show('cold start, createSandbox resolved', cold.resolvedMs);
  show('cold start, kernel ready with pandas imported', cold.readyMs);
  show('close (container removed)', cold.closeMs);

  const withWorkspace = await workspaceStarts(5);
  show('cold start with the student-loan workspace', withWorkspace.startMs);
  show('profile of the student-loan workspace (21 files)', withWorkspace.profileMs);

  const pool = await poolStarts(9);
  show('session start from the warm pool (acquire)', pool.acquireMs);
  show('warm pool, until the first cell answered', pool.untilFirstCellMs);

  const warm = await warmCells(300);
  show('trivial cell (1 + 1) on a warm session', warm.hostMs);
  show('the same, inside the kernel (durationMs)', warm.insideKernelMs);
  show('baseline-shaped cell (import pandas; print) warm', warm.baselineShapedCellMs);

  const dockerRun = await dockerRunPerCell(image, 10);
  show('baseline: docker run --rm per cell', dockerRun);
  const dockerExec = await dockerExecPerCell(image, 20);
  show('baseline: docker exec python3 per cell', dockerExec);

  const concurrency = await concurrentSessions(8, 20);
  progress(
    `8 sessions x 20 cells at once: ${concurrency.cellsTotalMs} ms for the cells, ${concurrency.totalMsIncludingStarts} ms with the starts, ${concurrency.errors} errors`,
  );

  const runtimes = await compareRuntimes(3);

  const ratio = (baseline: Distribution, ours: Distribution) => round(baseline.p50 / ours.p50);
  const summary = {
    image,
    machine: {
      cpus: os.cpus().length,
      memoryGiB: Math.round(os.totalmem() / 1024 ** 3),
      node: process.version,
    },
    imageRebuildKernelOnlyMs: rebuildMs,
    coldStart: {
      createSandboxResolvedMs: cold.resolvedMs,
      kernelReadyWithPandasMs: cold.readyMs,
      closeMs: cold.closeMs,
      withStudentLoanWorkspaceMs: withWorkspace.startMs,
      profileStudentLoanWorkspaceMs: withWorkspace.profileMs,
    },
    poolStart: { acquireMs: pool.acquireMs, untilFirstCellMs: pool.untilFirstCellMs },
    trivialWarmCell: {
      hostMs: warm.hostMs,
      insideKernelMs: warm.insideKernelMs,
      baselineShapedCellMs: warm.baselineShapedCellMs,
    },
    baselinesPerCell: { dockerRunMs: dockerRun, dockerExecMs: dockerExec },
    ratioBaselineToOurs: {
      dockerRunVsTrivialCell: ratio(dockerRun, warm.hostMs),
      dockerExecVsTrivialCell: ratio(dockerExec, warm.hostMs),
      dockerRunVsBaselineShapedCell: ratio(dockerRun, warm.baselineShapedCellMs),
      dockerExecVsBaselineShapedCell: ratio(dockerExec, warm.baselineShapedCellMs),
    },
    concurrency,
    runtimes,
    targets: {
      trivialWarmCellP50AtMost10Ms: warm.hostMs.p50 <= 10,
      atLeast30xFasterThanPerCellProcess:
        ratio(dockerExec, warm.hostMs) >= 30 && ratio(dockerRun, warm.hostMs) >= 30,
      poolStartP50AtMost50Ms: pool.acquireMs.p50 <= 50,
      coldStartP50AtMost1500Ms: cold.readyMs.p50 <= 1500,
      zeroErrors: concurrency.errors === 0,
    },
  };
  process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
}

await main();
