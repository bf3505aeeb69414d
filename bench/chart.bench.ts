import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { execa } from 'execa';

/**
 * `datalyst chart` against vega-lite's own command-line renderers (`vl2svg`,
 * `vl2png` from vega-lite's bin, which render through vega exactly as
 * vega-cli's `vg2svg`/`vg2png` do) on 100 specs in one batch, both measured
 * as a person runs them, process start included: one `datalyst chart` for
 * all specs; one `vl2svg` per spec (it takes one), run sequentially as a
 * shell loop would and two at a time (`xargs -P 2`, one per core). Rounds
 * alternate. Then the SVGs of every spec are compared byte for byte.
 *
 * PNG is compared only when node-canvas (vega's canvas renderer, needed by
 * vl2png) loads: its install script is off in this project (it downloads a
 * prebuilt binary or compiles against cairo), so build it by hand to compare
 * (`cd node_modules/canvas && npx node-gyp rebuild --nodedir=/usr`). PNG
 * rounds alternate too (ours, vl2png, ours); each round's ratio is vl2png's
 * time over the mean of the two of ours around it. Every PNG of ours is
 * decoded (node-canvas's libpng) and must have the pixel size of vl2png's
 * for the same spec (both at scale 1).
 *
 * Each figure comes with the CPU seconds of the process tree (user + system
 * of the finished children, from /proc/self/stat): steadier than wall time
 * on a machine others use.
 *
 * `BENCH_BASELINE_ROOT=<checkout>`: also runs that checkout's `datalyst
 * chart` in each round (before/after figures from one run).
 */
const SPECS = 100;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const root = resolve(import.meta.dirname, '..');
const datalyst = join(root, 'bin/datalyst.js');
const vegaLiteBin = join(root, 'node_modules/vega-lite/bin');
const baselineRoot = process.env.BENCH_BASELINE_ROOT;

/** A deterministic PRNG (mulberry32), so every run draws the same specs. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const categories = ['North', 'South', 'East', 'West', 'Central', 'Online', 'Export'];

/** Ten kinds of chart a report has (bars, lines, points, areas, heatmaps, boxplots, facets, layers, histograms, stacked bars), each with 40–800 rows. */
function makeSpec(index: number): Record<string, unknown> {
  const next = random(1000 + index);
  const rows = 40 + Math.floor(next() * 760);
  const values = Array.from({ length: rows }, (_, row) => ({
    day: `2025-${String(1 + (row % 12)).padStart(2, '0')}-${String(1 + (row % 28)).padStart(2, '0')}`,
    category: categories[row % categories.length],
    group: `G${row % 3}`,
    x: Math.round(next() * 10_000) / 100,
    y: Math.round((next() * 50 + row * 0.1) * 100) / 100,
  }));
  const base = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: `Chart ${index}`,
    data: { values },
  };
  switch (index % 10) {
    case 0:
      return {
        ...base,
        mark: 'bar',
        encoding: {
          x: { field: 'category', type: 'nominal' },
          y: { aggregate: 'sum', field: 'y', type: 'quantitative' },
        },
      };
    case 1:
      return {
        ...base,
        mark: 'line',
        encoding: {
          x: { field: 'day', type: 'temporal', timeUnit: 'yearmonth' },
          y: { aggregate: 'mean', field: 'y', type: 'quantitative' },
          color: { field: 'group', type: 'nominal' },
        },
      };
    case 2:
      return {
        ...base,
        mark: 'point',
        encoding: {
          x: { field: 'x', type: 'quantitative' },
          y: { field: 'y', type: 'quantitative' },
          color: { field: 'category', type: 'nominal' },
        },
      };
    case 3:
      return {
        ...base,
        mark: 'area',
        encoding: {
          x: { field: 'day', type: 'temporal', timeUnit: 'yearmonth' },
          y: { aggregate: 'sum', field: 'x', type: 'quantitative' },
          color: { field: 'group', type: 'nominal' },
        },
      };
    case 4:
      return {
        ...base,
        mark: 'rect',
        encoding: {
          x: { field: 'category', type: 'nominal' },
          y: { field: 'group', type: 'nominal' },
          color: { aggregate: 'mean', field: 'y', type: 'quantitative' },
        },
      };
    case 5:
      return {
        ...base,
        mark: 'boxplot',
        encoding: { x: { field: 'category', type: 'nominal' }, y: { field: 'y', type: 'quantitative' } },
      };
    case 6:
      return {
        ...base,
        mark: 'bar',
        encoding: {
          x: { field: 'x', bin: { maxbins: 30 }, type: 'quantitative' },
          y: { aggregate: 'count', type: 'quantitative' },
        },
      };
    case 7:
      return {
        ...base,
        mark: 'point',
        width: 150,
        height: 120,
        encoding: {
          x: { field: 'x', type: 'quantitative' },
          y: { field: 'y', type: 'quantitative' },
          facet: { field: 'group', type: 'nominal', columns: 3 },
        },
      };
    case 8:
      return {
        ...base,
        encoding: { x: { field: 'x', type: 'quantitative' }, y: { field: 'y', type: 'quantitative' } },
        layer: [
          { mark: { type: 'point', opacity: 0.4 } },
          { mark: { type: 'line', color: 'firebrick' }, transform: [{ regression: 'y', on: 'x' }] },
        ],
      };
    default:
      return {
        ...base,
        mark: 'bar',
        encoding: {
          x: { field: 'category', type: 'nominal' },
          y: { aggregate: 'sum', field: 'x', type: 'quantitative' },
          color: { field: 'group', type: 'nominal' },
        },
      };
  }
}

/** CPU seconds of this process's finished children and theirs (clock ticks of 1/100 s). */
async function childrenCpuSeconds(): Promise<number> {
  const fields = (await readFile('/proc/self/stat', 'utf8')).split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

const cpuSeconds: Record<string, number> = {};

async function timed(work: () => Promise<unknown>, label?: string): Promise<number> {
  const cpuBefore = await childrenCpuSeconds();
  const started = performance.now();
  await work();
  const ms = Math.round(performance.now() - started);
  if (label !== undefined) cpuSeconds[label] = Number(((await childrenCpuSeconds()) - cpuBefore).toFixed(2));
  return ms;
}

/** Width and height from a PNG's IHDR chunk. */
function pngSize(bytes: Buffer): { width: number; height: number } | null {
  const signature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (!signature.every((byte, index) => bytes[index] === byte)) return null;
  if (bytes.toString('latin1', 12, 16) !== 'IHDR') return null;
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

/** Runs one command per spec, `parallel` at a time (a shell loop, or xargs -P). */
async function perSpec(
  parallel: number,
  specPaths: string[],
  command: (spec: string) => [string, string[]],
): Promise<void> {
  const queue = [...specPaths];
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      for (let spec = queue.shift(); spec !== undefined; spec = queue.shift()) {
        const [file, args] = command(spec);
        await execa(file, args);
      }
    }),
  );
}

function canvasLoads(): boolean {
  try {
    createRequire(join(vegaLiteBin, 'render.js'))('canvas');
    return true;
  } catch {
    return false;
  }
}

const work = await mkdtemp(join(tmpdir(), 'datalyst-bench-chart-'));
try {
  const specDir = join(work, 'specs');
  await mkdir(specDir);
  const specPaths: string[] = [];
  for (let index = 0; index < SPECS; index++) {
    const path = join(specDir, `chart-${String(index).padStart(3, '0')}.vl.json`);
    await writeFile(path, JSON.stringify(makeSpec(index)));
    specPaths.push(path);
  }
  const ours =
    (format: 'svg' | 'png', out: string, bin = datalyst) =>
    () =>
      execa('node', [bin, 'chart', ...specPaths, '--format', format, '--quiet', '-o', out]);
  const baseline = baselineRoot === undefined ? null : join(baselineRoot, 'bin/datalyst.js');
  const theirs = (format: 'svg' | 'png', out: string, parallel: number) => async () => {
    await mkdir(out, { recursive: true });
    await perSpec(parallel, specPaths, (spec) => [
      'node',
      [
        join(vegaLiteBin, `vl2${format}`),
        spec,
        join(out, `${spec.split('/').pop()?.replace('.vl.json', '')}.${format}`),
      ],
    ]);
  };

  const rounds: Array<Record<string, number>> = [];
  for (let round = 0; round < ROUNDS; round++) {
    const figures: Record<string, number> = {};
    figures.datalystSvgMs = await timed(ours('svg', join(work, `ours-svg-${round}`)), 'datalystSvg');
    figures.vl2svgTwoAtATimeMs = await timed(
      theirs('svg', join(work, `theirs-svg-p2-${round}`), 2),
      'vl2svg',
    );
    figures.datalystSvgAgainMs = await timed(ours('svg', join(work, `ours-svg-b-${round}`)));
    if (round === 0) figures.vl2svgSequentialMs = await timed(theirs('svg', join(work, 'theirs-svg-seq'), 1));
    rounds.push(figures);
    console.log(`round ${round + 1}: ${JSON.stringify(figures)} cpuSeconds ${JSON.stringify(cpuSeconds)}`);
  }

  let png: Record<string, unknown>;
  if (canvasLoads()) {
    const pngRounds: Array<Record<string, number>> = [];
    for (let round = 0; round < ROUNDS; round++) {
      const figures: Record<string, number> = {};
      figures.datalystPngMs = await timed(ours('png', join(work, `ours-png-${round}`)), 'datalystPng');
      if (baseline)
        figures.baselineDatalystPngMs = await timed(
          ours('png', join(work, `baseline-png-${round}`), baseline),
          'baselineDatalystPng',
        );
      figures.vl2pngTwoAtATimeMs = await timed(theirs('png', join(work, `theirs-png-${round}`), 2), 'vl2png');
      figures.datalystPngAgainMs = await timed(
        ours('png', join(work, `ours-png-b-${round}`)),
        'datalystPngAgain',
      );
      figures.speedupTwoAtATime = Number(
        (figures.vl2pngTwoAtATimeMs / ((figures.datalystPngMs + figures.datalystPngAgainMs) / 2)).toFixed(1),
      );
      if (baseline)
        figures.baselineSpeedupTwoAtATime = Number(
          (figures.vl2pngTwoAtATimeMs / (figures.baselineDatalystPngMs ?? 1)).toFixed(1),
        );
      pngRounds.push(figures);
      console.log(
        `png round ${round + 1}: ${JSON.stringify(figures)} cpuSeconds ${JSON.stringify(cpuSeconds)}`,
      );
    }
    // Every PNG of ours decodes and has vl2png's pixel size for the same spec.
    const { loadImage } = createRequire(join(vegaLiteBin, 'render.js'))('canvas') as {
      loadImage: (source: Buffer) => Promise<{ width: number; height: number }>;
    };
    let valid = 0;
    let sameSizeAsVl2png = 0;
    const problems: string[] = [];
    for (const name of (await readdir(join(work, 'theirs-png-0'))).sort()) {
      const [mine, theirsBytes] = await Promise.all([
        readFile(join(work, 'ours-png-0', name)),
        readFile(join(work, 'theirs-png-0', name)),
      ]);
      const decoded = await loadImage(mine).catch(() => null);
      const header = pngSize(mine);
      if (decoded && header && decoded.width === header.width && decoded.height === header.height) valid += 1;
      else problems.push(`${name}: not a valid PNG`);
      const expected = pngSize(theirsBytes);
      if (header && expected && header.width === expected.width && header.height === expected.height)
        sameSizeAsVl2png += 1;
      else problems.push(`${name}: ${JSON.stringify(header)} vs vl2png ${JSON.stringify(expected)}`);
    }
    const ratios = pngRounds.map((figures) => figures.speedupTwoAtATime ?? 0).sort((a, b) => a - b);
    png = {
      rounds: pngRounds,
      speedupTwoAtATimeMedian: ratios[Math.floor(ratios.length / 2)],
      speedupTwoAtATimeMin: ratios[0],
      goal: '>= 5x',
      validPngs: valid,
      sameSizeAsVl2png,
      problems: problems.slice(0, 10),
      cpuSecondsLastRound: cpuSeconds,
    };
  } else {
    png = {
      skipped: 'node-canvas does not load (its install script is off), so vl2png cannot run: SVG only',
    };
  }

  // Byte for byte, every spec: ours against vl2svg's (first round's outputs).
  const identical: string[] = [];
  const different: string[] = [];
  for (const name of (await readdir(join(work, 'theirs-svg-p2-0'))).sort()) {
    const [a, b] = await Promise.all([
      readFile(join(work, 'ours-svg-0', name)),
      readFile(join(work, 'theirs-svg-p2-0', name)),
    ]);
    (a.equals(b) ? identical : different).push(name);
  }
  const mean = (key: string): number =>
    rounds.reduce((total, figures) => total + (figures[key] ?? 0), 0) /
    rounds.filter((figures) => key in figures).length;
  const oursMean = (mean('datalystSvgMs') + mean('datalystSvgAgainMs')) / 2;
  console.log(
    JSON.stringify(
      {
        specs: SPECS,
        machine: { cores: availableParallelism(), loadAverage1m: Number(loadavg()[0]?.toFixed(2)) },
        svg: {
          datalystMeanMs: Math.round(oursMean),
          vl2svgTwoAtATimeMeanMs: Math.round(mean('vl2svgTwoAtATimeMs')),
          vl2svgSequentialMs: rounds[0]?.vl2svgSequentialMs,
          speedupTwoAtATime: Number((mean('vl2svgTwoAtATimeMs') / oursMean).toFixed(1)),
          speedupSequential: Number(((rounds[0]?.vl2svgSequentialMs ?? 0) / oursMean).toFixed(1)),
          goal: '>= 5x',
        },
        png,
        byteIdenticalSvg: {
          identical: identical.length,
          different: different.length,
          firstTen: identical.slice(0, 10),
          differ: different,
        },
      },
      null,
      2,
    ),
  );
} finally {
  await rm(work, { recursive: true, force: true });
}
