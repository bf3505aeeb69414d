// npm run bench:sandbox — what the Docker sandbox costs.
//
// 1. Rebuilding the runner image when only the kernel changed (a copy of
//    docker/python-runner with one kernel file edited, built under a throwaway
//    tag; every layer above `COPY kernel/` comes from the cache).
// 2. Session start, cold (a new container each time): until createSandbox
//    resolves, without and with the student-loan workspace copied in, and
//    until the first cell has answered (the worker's imports).
// 3. A trivial cell (`1 + 1`) on a warm session, and its time inside the
//    kernel, to show what the transport adds.
// 4. The workspace profile of the student-loan data, and close().
//
// Targets (issue 3): trivial warm cell p50 ≤ 10 ms, cold start ≤ 1.5 s.
// Prints figures; asserts nothing.
import { appendFile, cp, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { execa } from 'execa';
import { createSandbox, ensureRunnerImage } from '../src/sandbox/index.ts';
import { LOCAL_BASE_IMAGE, REGISTRY_BASE_IMAGE, runnerImageDir } from '../src/sandbox/runner-image.ts';

const studentLoanDir = path.join(
  import.meta.dirname,
  '..',
  'test',
  'fixtures',
  'deepanalyze-student-loan',
  'data',
);

function percentile(values: readonly number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] ?? Number.NaN;
}

function summary(values: readonly number[]): string {
  const round = (value: number) => Math.round(value * 100) / 100;
  return `p50 ${round(percentile(values, 0.5))} ms, p90 ${round(percentile(values, 0.9))} ms, min ${round(Math.min(...values))} ms (n=${values.length})`;
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

async function baseImage(): Promise<string> {
  const local = await execa('docker', ['image', 'inspect', LOCAL_BASE_IMAGE], { reject: false });
  return local.exitCode === 0 ? LOCAL_BASE_IMAGE : REGISTRY_BASE_IMAGE;
}

async function main(): Promise<void> {
  const { image } = await ensureRunnerImage({ onProgress: (line) => console.error(line) });
  console.log(`runner image: ${image}`);

  console.log(`image rebuild, only the kernel changed: ${Math.round(await imageRebuildMs())} ms`);

  // One session first, so that the engine's caches are as warm as they will be.
  await (await createSandbox()).close();

  const startMs: number[] = [];
  const firstCellMs: number[] = [];
  const closeMs: number[] = [];
  for (let run = 0; run < 7; run++) {
    const started = performance.now();
    const session = await createSandbox();
    startMs.push(performance.now() - started);
    await session.execute('1 + 1');
    firstCellMs.push(performance.now() - started);
    const closing = performance.now();
    await session.close();
    closeMs.push(performance.now() - closing);
  }
  console.log(`cold start, createSandbox resolved:            ${summary(startMs)}`);
  console.log(`cold start, until the first cell answered:     ${summary(firstCellMs)}`);
  console.log(`close (container removed):                    ${summary(closeMs)}`);

  const workspaceStartMs: number[] = [];
  const profileMs: number[] = [];
  for (let run = 0; run < 5; run++) {
    const started = performance.now();
    const session = await createSandbox({ workspaceDir: studentLoanDir });
    workspaceStartMs.push(performance.now() - started);
    const profiling = performance.now();
    await session.profileWorkspace();
    profileMs.push(performance.now() - profiling);
    await session.close();
  }
  console.log(`cold start with the student-loan workspace:    ${summary(workspaceStartMs)}`);
  console.log(`profile of the student-loan workspace (21 files): ${summary(profileMs)}`);

  const session = await createSandbox();
  try {
    for (let warm = 0; warm < 20; warm++) await session.execute('1 + 1');
    const cellMs: number[] = [];
    const kernelMs: number[] = [];
    for (let run = 0; run < 300; run++) {
      const started = performance.now();
      const result = await session.execute('1 + 1');
      cellMs.push(performance.now() - started);
      kernelMs.push(result.durationMs);
    }
    console.log(`trivial cell on a warm session (host view):    ${summary(cellMs)}`);
    console.log(`the same, inside the kernel (durationMs):      ${summary(kernelMs)}`);
  } finally {
    await session.close();
  }
}

await main();
