// npm run bench:data — inputs of real size, against a bind-mounted `docker run`
// measured in the same run on this machine. Progress goes to stderr; the
// summary is one JSON object on stdout. Asserts nothing.
//
// 1. Synthetic CSVs of 50 MiB, 300 MiB and 1 GiB (deterministic, generated into
//    a temporary folder, deleted at the end), at the default limits:
//    - ours: createSandbox with the folder (session ready with the workspace),
//      then `pd.read_csv` in a cell, then the container's peak memory;
//    - baseline: `docker run --rm` of the same image with the same limits and
//      hardening, the folder bind-mounted read-only, `pd.read_csv` in one
//      `python3 -c`, and its peak memory.
//    Alternating ours/baseline, `DATALYST_BENCH_REPS` rounds (default 2).
//    Peak memory is the memory cgroup's (v1 memory.max_usage_in_bytes or v2
//    memory.peak, read from inside the container: it includes page cache).
// 2. A 2000-file workspace: createSandbox until ready, and a warm-pool acquire
//    (its volume filled at acquire).
//
// Targets (issue 10): 1 GiB read with no `memory` status; setup + read ≤ 1.2×
// the baseline; a 2000-file workspace ready in ≤ 2 s.
import { mkdir, mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { execa } from 'execa';
import {
  createSandbox,
  createWarmPool,
  defaultSandboxLimits,
  ensureRunnerImage,
} from '../src/sandbox/index.ts';

const MIB = 1024 * 1024;
const sizes = [
  { label: '50MiB', bytes: 50 * MIB },
  { label: '300MiB', bytes: 300 * MIB },
  { label: '1GiB', bytes: 1024 * MIB },
];
const reps = Math.max(1, Number(process.env.DATALYST_BENCH_REPS ?? 2));

const peakMemoryCode = [
  'def _peak_mb():',
  '    for path in ("/sys/fs/cgroup/memory.peak", "/sys/fs/cgroup/memory/memory.max_usage_in_bytes"):',
  '        try:',
  '            return round(int(open(path).read()) / 1048576)',
  '        except (OSError, ValueError):',
  '            pass',
  '    return None',
].join('\n');
// READ_MS: the read_csv call alone, timed inside the container (no start, no import).
const readCode = [
  'import pandas as pd, time',
  '_started = time.perf_counter()',
  "frame = pd.read_csv('data.csv')",
  "print(frame.shape, 'READ_MS', round((time.perf_counter() - _started) * 1000))",
].join('\n');

function readInsideMs(stdout: string): number | null {
  const found = /READ_MS (\d+)/.exec(stdout)?.[1];
  return found === undefined ? null : Number(found);
}

function progress(message: string): void {
  process.stderr.write(`[bench:data] ${message}\n`);
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** A small deterministic PRNG (mulberry32): the same file on every machine. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

const header = 'id,region,product,price,quantity,score,weight\n';
let cachedBlocks: Buffer[] | undefined;

/**
 * Four distinct 4 MiB blocks of rows, built once: an id, a region (5 values),
 * a product name (20 values), four decimals. Mostly numbers, as measurement
 * data is: the frame takes about half the bytes of the text.
 */
function rowBlocks(): Buffer[] {
  if (cachedBlocks) return cachedBlocks;
  const next = random(20261123);
  const regions = ['north', 'south', 'east', 'west', 'central'];
  const products = Array.from({ length: 20 }, (_, index) => `product line ${index} standard edition`);
  const blocks: Buffer[] = [];
  let id = 0;
  for (let block = 0; block < 4; block += 1) {
    const rows: string[] = [];
    let length = 0;
    while (length < 4 * MIB) {
      id += 1;
      const row = `${id},${regions[Math.floor(next() * regions.length)]},${products[Math.floor(next() * products.length)]},${(next() * 1000).toFixed(9)},${(next() * 500).toFixed(9)},${next().toFixed(9)},${(next() * 80).toFixed(9)}\n`;
      rows.push(row);
      length += row.length;
    }
    blocks.push(Buffer.from(rows.join('')));
  }
  cachedBlocks = blocks;
  return blocks;
}

/** A CSV of about `bytes` (cut at a row end), its blocks in an order a seeded PRNG picks. */
async function writeCsv(file: string, bytes: number): Promise<void> {
  const next = random(bytes);
  const blocks = rowBlocks();
  const handle = await open(file, 'w');
  try {
    let written = (await handle.write(header)).bytesWritten;
    while (written < bytes) {
      const block = blocks[Math.floor(next() * blocks.length)] as Buffer;
      if (written + block.length <= bytes) {
        await handle.write(block);
        written += block.length;
        continue;
      }
      const piece = block.subarray(0, block.lastIndexOf(0x0a, bytes - written - 1) + 1);
      if (piece.length > 0) await handle.write(piece);
      break;
    }
  } finally {
    await handle.close();
  }
}

interface Measured {
  setupMs: number;
  readMs: number;
  totalMs: number;
  /** pd.read_csv alone, timed inside the container. */
  readInsideMs: number | null;
  status: string;
  peakMb: number | null;
}

async function measureOurs(workspaceDir: string): Promise<Measured> {
  const started = performance.now();
  const session = await createSandbox({ workspaceDir });
  const setupMs = performance.now() - started;
  try {
    const readStarted = performance.now();
    const read = await session.execute(readCode);
    const readMs = performance.now() - readStarted;
    const peak = await session.execute(`${peakMemoryCode}\n_peak_mb()`);
    return {
      setupMs: round(setupMs),
      readMs: round(readMs),
      totalMs: round(setupMs + readMs),
      readInsideMs: readInsideMs(read.stdout.text),
      status: read.status,
      peakMb: peak.value === null || peak.value === 'None' ? null : Number(peak.value),
    };
  } finally {
    await session.close();
  }
}

/** The same image, limits and hardening as a session, the folder bind-mounted read-only, one process. */
async function measureBaseline(image: string, workspaceDir: string): Promise<Measured> {
  const limits = defaultSandboxLimits;
  const started = performance.now();
  const run = await execa(
    'docker',
    [
      'run',
      '--rm',
      '--network=none',
      '--read-only',
      '--user=1000:1000',
      '--cap-drop=ALL',
      '--security-opt=no-new-privileges',
      `--memory=${limits.memoryMb}m`,
      `--memory-swap=${limits.memoryMb}m`,
      `--cpus=${limits.cpus}`,
      `--pids-limit=${limits.pidsLimit}`,
      '--tmpfs=/tmp:rw,noexec,nosuid,nodev,size=256m',
      `--mount=type=bind,source=${workspaceDir},target=/data,readonly`,
      '--workdir=/data',
      image,
      'python3',
      '-c',
      `${peakMemoryCode}\n${readCode}\nprint('PEAK', _peak_mb())`,
    ],
    { reject: false },
  );
  const totalMs = performance.now() - started;
  const peak = /PEAK (\d+)/.exec(run.stdout)?.[1];
  const status = run.exitCode === 0 ? 'ok' : run.exitCode === 137 ? 'memory' : `exit ${run.exitCode}`;
  return {
    setupMs: Number.NaN,
    readMs: Number.NaN,
    totalMs: round(totalMs),
    readInsideMs: readInsideMs(run.stdout),
    status,
    peakMb: peak ? Number(peak) : null,
  };
}

async function main(): Promise<void> {
  const { image } = await ensureRunnerImage({ onProgress: progress });
  const root = await mkdtemp(path.join(os.tmpdir(), 'datalyst-bench-data-'));
  try {
    const results: Record<string, unknown> = {};
    const ratios: number[] = [];
    let oneGibStatuses: string[] = [];
    for (const size of sizes) {
      const dir = path.join(root, size.label);
      await mkdir(dir);
      const generated = performance.now();
      await writeCsv(path.join(dir, 'data.csv'), size.bytes);
      progress(`${size.label}: generated in ${Math.round(performance.now() - generated)} ms`);
      const ours: Measured[] = [];
      const baseline: Measured[] = [];
      for (let round_ = 0; round_ < reps; round_ += 1) {
        // Alternating, the order flipped every round, so neither side always reads a warm page cache.
        const order = round_ % 2 === 0 ? ['baseline', 'ours'] : ['ours', 'baseline'];
        for (const side of order) {
          const measured = side === 'ours' ? await measureOurs(dir) : await measureBaseline(image, dir);
          (side === 'ours' ? ours : baseline).push(measured);
          progress(`${size.label} ${side}: ${JSON.stringify(measured)}`);
        }
      }
      const ratio = median(ours.map((m) => m.totalMs)) / median(baseline.map((m) => m.totalMs));
      ratios.push(ratio);
      if (size.label === '1GiB') oneGibStatuses = ours.map((m) => m.status);
      results[size.label] = {
        ours: {
          setupMsMedian: round(median(ours.map((m) => m.setupMs))),
          readMsMedian: round(median(ours.map((m) => m.readMs))),
          totalMsMedian: round(median(ours.map((m) => m.totalMs))),
          totalMs: ours.map((m) => m.totalMs),
          readInsideMs: ours.map((m) => m.readInsideMs),
          statuses: ours.map((m) => m.status),
          peakMb: ours.map((m) => m.peakMb),
        },
        baseline: {
          totalMsMedian: round(median(baseline.map((m) => m.totalMs))),
          totalMs: baseline.map((m) => m.totalMs),
          readInsideMs: baseline.map((m) => m.readInsideMs),
          statuses: baseline.map((m) => m.status),
          peakMb: baseline.map((m) => m.peakMb),
        },
        ratioOursToBaseline: round(ratio),
      };
      await rm(dir, { recursive: true, force: true });
    }

    const manyDir = path.join(root, 'many');
    for (let folder = 0; folder < 20; folder += 1) {
      await mkdir(path.join(manyDir, `part-${folder}`), { recursive: true });
      await Promise.all(
        Array.from({ length: 100 }, (_, index) =>
          writeFile(
            path.join(manyDir, `part-${folder}`, `file-${index}.csv`),
            `id,value\n${index},${folder}\n`,
          ),
        ),
      );
    }
    const readyMs: number[] = [];
    const firstCellMs: number[] = [];
    for (let round_ = 0; round_ < reps; round_ += 1) {
      const started = performance.now();
      const session = await createSandbox({ workspaceDir: manyDir });
      readyMs.push(performance.now() - started);
      const cell = await session.execute('import os\nsum(len(fs) for _, _, fs in os.walk("."))');
      firstCellMs.push(performance.now() - started);
      if (cell.value !== '2000') throw new Error(`the 2000-file workspace arrived as ${cell.value} files`);
      await session.close();
    }
    const pool = createWarmPool({ size: 1 });
    const acquireMs: number[] = [];
    try {
      for (let round_ = 0; round_ < reps; round_ += 1) {
        while (pool.stats.ready < 1) await new Promise((resolve) => setTimeout(resolve, 100));
        const started = performance.now();
        const session = await pool.acquire({ workspaceDir: manyDir });
        acquireMs.push(performance.now() - started);
        await session.close();
      }
    } finally {
      await pool.close();
    }
    const many = {
      files: 2000,
      createSandboxReadyMs: readyMs.map(round),
      untilFirstCellAnsweredMs: firstCellMs.map(round),
      warmPoolAcquireMs: acquireMs.map(round),
    };

    const summary = {
      bench: 'data',
      machine: {
        cpus: os.cpus().length,
        memoryGb: Math.round(os.totalmem() / 1024 ** 3),
        load: os.loadavg(),
      },
      image,
      limits: { memoryMb: defaultSandboxLimits.memoryMb, cpus: defaultSandboxLimits.cpus },
      reps,
      csv: results,
      manyFiles: many,
      targets: {
        oneGibReadWithoutMemoryStatus:
          oneGibStatuses.length > 0 && oneGibStatuses.every((status) => status === 'ok'),
        setupPlusReadAtMost1_2xBaseline: ratios.every((ratio) => ratio <= 1.2),
        twoThousandFilesReadyAtMost2s: median(readyMs) <= 2000,
      },
    };
    process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

await main();
