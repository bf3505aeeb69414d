// npx tsx bench/profile.bench.ts — the in-sandbox workspace profile on a CSV of
// a few hundred MB (default 300 MiB, BENCH_PROFILE_MB), with the runner image
// of this tree against a baseline image (BENCH_BASELINE_IMAGE, e.g. the image
// of main before the profile gained its report statistics), alternating,
// DATALYST_BENCH_REPS rounds (default 2). One JSON object on stdout. Asserts nothing.
import { mkdtemp, open, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createSandbox, ensureRunnerImage } from '../src/sandbox/index.ts';

const MIB = 1024 * 1024;
const megabytes = Number(process.env.BENCH_PROFILE_MB ?? 300);
const reps = Math.max(1, Number(process.env.DATALYST_BENCH_REPS ?? 2));
const baselineImage = process.env.BENCH_BASELINE_IMAGE ?? null;

/** Deterministic rows: an id, a date, two categories, three measures (two correlated), a text column. */
async function writeCsv(file: string, bytes: number): Promise<number> {
  const handle = await open(file, 'w');
  let seed = 42;
  const next = (): number => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed / 2_147_483_648;
  };
  const regions = ['North', 'South', 'East', 'West'];
  const products = Array.from({ length: 40 }, (_, index) => `Product ${index + 1}`);
  let written = 0;
  let rows = 0;
  try {
    written += (await handle.write('order_id,order_date,region,product,units,unit_price,revenue,comment\n'))
      .bytesWritten;
    while (written < bytes) {
      const lines: string[] = [];
      for (let index = 0; index < 5000; index++) {
        const units = 1 + Math.floor(next() * 12);
        const price = Math.round((5 + next() * 250) * 100) / 100;
        const day = 1 + Math.floor(next() * 28);
        lines.push(
          `SO-${rows + index},2024-${String(1 + Math.floor(next() * 12)).padStart(2, '0')}-${String(day).padStart(2, '0')},${regions[Math.floor(next() * 4)]},${products[Math.floor(next() * 40)]},${units},${price},${(units * price).toFixed(2)},note ${Math.floor(next() * 1e6)} about the order`,
        );
      }
      rows += lines.length;
      written += (await handle.write(`${lines.join('\n')}\n`)).bytesWritten;
    }
  } finally {
    await handle.close();
  }
  return rows;
}

async function timeProfile(
  workspaceDir: string,
  image: string,
): Promise<{ ms: number; statistics: boolean }> {
  const session = await createSandbox({ workspaceDir, image });
  try {
    const started = performance.now();
    const profile = await session.profileWorkspace();
    const ms = performance.now() - started;
    return { ms: Math.round(ms), statistics: profile.files[0]?.tables[0]?.correlations !== undefined };
  } finally {
    await session.close();
  }
}

const dir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-profile-bench-'));
try {
  const { image } = await ensureRunnerImage();
  const rows = await writeCsv(path.join(dir, 'big.csv'), megabytes * MIB);
  const ours: number[] = [];
  const baseline: number[] = [];
  let statistics = false;
  for (let rep = 0; rep < reps; rep++) {
    process.stderr.write(`round ${rep + 1} of ${reps}\n`);
    // Alternating which goes first, so that neither always meets a cold page cache.
    if (baselineImage !== null && rep % 2 === 1) baseline.push((await timeProfile(dir, baselineImage)).ms);
    const measured = await timeProfile(dir, image);
    ours.push(measured.ms);
    statistics = measured.statistics;
    if (baselineImage !== null && rep % 2 === 0) baseline.push((await timeProfile(dir, baselineImage)).ms);
  }
  const median = (values: number[]): number =>
    [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
  console.log(
    JSON.stringify({
      csvMiB: megabytes,
      csvRows: rows,
      image,
      withReportStatistics: statistics,
      profileMs: ours,
      ...(baselineImage === null
        ? {}
        : {
            baselineImage,
            baselineProfileMs: baseline,
            ratioOursOverBaseline: Number((median(ours) / median(baseline)).toFixed(2)),
          }),
    }),
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
