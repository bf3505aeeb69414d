// npm run bench:analyst-load — what the offline analyst's load step costs on a
// large CSV, against a plain `pd.read_csv` of the same file in the same
// sandbox session, at the default sandbox limits. Progress goes to stderr;
// the summary is one JSON object on stdout. Asserts nothing.
//
// The file is synthetic (ids, a category, amounts, scores, dates as text),
// BENCH_CSV_MB MiB (default 1024). The analyst's cells are the real ones: the
// conversation is driven turn by turn with the kernel's real outputs until the
// load step has run. Runs alternate: plain, load, plain, load, … (BENCH_ROUNDS,
// default 2), and the ratio is the median load cell over the median plain read.
//
// A plain read that runs out of memory restarts the kernel, so each round runs
// the analyst's helper cells again, then its load cell, then the plain read.
// When the plain read cannot finish at the default limits, a second session
// with BENCH_BASELINE_MEMORY_MB (default 6144) times a plain read that can,
// and the ratio against it is reported as well.
//
// Targets (issue 11): no `memory` status; load cell ≤ 1.5× the plain read.
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { formatFirstMessage } from '../src/agent/first-message.ts';
import type { ChatMessage } from '../src/agent/language-model.ts';
import { offlineAnalystTurn } from '../src/agent/offline-analyst/index.ts';
import { stageOfCode } from '../src/agent/offline-analyst/stages.ts';
import { stripCodeFence } from '../src/agent/code-fence.ts';
import { createSandbox, type SandboxSession } from '../src/sandbox/index.ts';
import type { CellResult } from '../src/sandbox/cell-result.ts';

const sizeMb = Number(process.env.BENCH_CSV_MB ?? 1024);
const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
const baselineMemoryMb = Number(process.env.BENCH_BASELINE_MEMORY_MB ?? 6144);
const cellTimeoutMs = 20 * 60 * 1000;

function log(message: string): void {
  process.stderr.write(`[analyst-load] ${message}\n`);
}

async function writeCsv(file: string, bytes: number): Promise<number> {
  const out = createWriteStream(file);
  let written = 0;
  let row = 0;
  let state = 12345;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
  const groups = ['north', 'south', 'east', 'west', 'centre'];
  out.write('id,region,amount,score,day\n');
  while (written < bytes) {
    const lines: string[] = [];
    for (let index = 0; index < 5000; index += 1, row += 1) {
      const day = 1 + Math.floor(next() * 28);
      lines.push(
        `${row},${groups[row % 5]},${(next() * 10000).toFixed(2)},${Math.floor(next() * 100)},2024-03-${String(day).padStart(2, '0')}`,
      );
    }
    const chunk = `${lines.join('\n')}\n`;
    written += Buffer.byteLength(chunk);
    if (!out.write(chunk)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return row;
}

function output(result: CellResult): string {
  const error = result.error === null ? '' : `\n${result.error.name}: ${result.error.value}`;
  return `${result.stdout.text}${result.stderr.text}${error}`;
}

async function timed(session: SandboxSession, code: string): Promise<CellResult> {
  return session.execute(code, { timeoutMs: cellTimeoutMs });
}

/** Runs the analyst's turns up to its load step (setup, prepare, registry) and returns the load cell's code. */
async function prepareAnalyst(session: SandboxSession, firstMessage: string): Promise<string> {
  const messages: ChatMessage[] = [{ role: 'user', content: firstMessage }];
  for (;;) {
    const turn = offlineAnalystTurn({ messages });
    const code = stripCodeFence(/<Code>([\s\S]*)<\/Code>/.exec(turn)?.[1] ?? '');
    if (stageOfCode(code) === 'load') return code;
    if (code === '') throw new Error(`the analyst answered before its load step: ${turn.slice(0, 300)}`);
    const result = await timed(session, code);
    if (result.status !== 'ok')
      throw new Error(`${stageOfCode(code)} failed: ${output(result).slice(0, 300)}`);
    messages.push({ role: 'assistant', content: turn }, { role: 'execute', content: output(result) });
  }
}

const plainRead =
  "import pandas as pd, gc\nframe = pd.read_csv('big.csv')\nprint(len(frame))\ndel frame\ngc.collect()";

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-analyst-load-'));
  try {
    const file = path.join(dir, 'big.csv');
    log(`writing a ${sizeMb} MiB CSV`);
    const rows = await writeCsv(file, sizeMb * 1024 * 1024);
    const bytes = (await stat(file)).size;
    log(`${rows} rows, ${bytes} bytes; starting a sandbox at the default limits`);
    const session = await createSandbox({ workspaceDir: dir });
    const median = (values: number[]) =>
      [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
    const plain: number[] = [];
    const load: number[] = [];
    const statuses: string[] = [];
    let loadOutput = '';
    let profileMs = 0;
    try {
      const profileStarted = performance.now();
      const profile = await session.profileWorkspace();
      profileMs = performance.now() - profileStarted;
      const firstMessage = formatFirstMessage('Describe the data.', profile);
      for (let round = 0; round < rounds; round += 1) {
        const loadCode = await prepareAnalyst(session, firstMessage);
        const analyst = await timed(session, loadCode);
        statuses.push(`load:${analyst.status}`);
        load.push(analyst.durationMs);
        loadOutput = output(analyst);
        log(`load cell ${round + 1}: ${analyst.status} ${Math.round(analyst.durationMs)} ms`);
        const baseline = await timed(session, plainRead);
        statuses.push(`plain:${baseline.status}`);
        plain.push(baseline.durationMs);
        log(`plain read ${round + 1}: ${baseline.status} ${Math.round(baseline.durationMs)} ms`);
      }
    } finally {
      await session.close();
    }
    const plainFailed = statuses.some((status) => status.startsWith('plain:') && status !== 'plain:ok');
    const roomy: number[] = [];
    if (plainFailed) {
      log(`the plain read did not finish at the default limits; timing it with ${baselineMemoryMb} MiB`);
      const big = await createSandbox({ workspaceDir: dir, limits: { memoryMb: baselineMemoryMb } });
      try {
        for (let round = 0; round < rounds; round += 1) {
          const baseline = await timed(big, plainRead);
          roomy.push(baseline.durationMs);
          log(
            `plain read with ${baselineMemoryMb} MiB ${round + 1}: ${baseline.status} ${Math.round(baseline.durationMs)} ms`,
          );
        }
      } finally {
        await big.close();
      }
    }
    const sampleLine =
      /Figures for .* come from a random sample of \d+ of its \d+ rows[^\n]*/.exec(loadOutput)?.[0] ?? null;
    console.log(
      JSON.stringify(
        {
          csvBytes: bytes,
          csvRows: rows,
          loadCellMemoryStatus: statuses.some((status) => status === 'load:memory'),
          statuses,
          loadCellMs: load.map(Math.round),
          plainReadMs: plain.map(Math.round),
          ratioLoadOverPlain: Math.round((median(load) / median(plain)) * 100) / 100,
          ...(plainFailed
            ? {
                plainReadNote: `the plain read ended with a non-ok status at the default limits (its time is until it stopped)`,
                [`plainReadMsAt${baselineMemoryMb}MiB`]: roomy.map(Math.round),
                [`ratioLoadOverPlainAt${baselineMemoryMb}MiB`]:
                  Math.round((median(load) / median(roomy)) * 100) / 100,
              }
            : {}),
          profileMs: Math.round(profileMs),
          sampleFinding: sampleLine,
        },
        null,
        2,
      ),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
