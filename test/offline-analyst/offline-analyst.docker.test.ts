import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyze } from '../../src/agent/analyze.ts';
import type { AnalysisResult } from '../../src/agent/events.ts';
import type { ModelProfileName } from '../../src/agent/model-profile.ts';
import { createOfflineAnalyst } from '../../src/agent/offline-analyst/index.ts';
import { renderRunFolder } from '../../src/report/index.ts';
import { readTrace } from '../../src/trace/reader.ts';
import type { ExecutionRecord, ModelTurnRecord, TraceRecord } from '../../src/trace/schema.ts';
import { numbersMissingFrom } from './support/answer-numbers.ts';

/**
 * The offline analyst through the real loop and the real Docker sandbox, on
 * every example workspace and on the shared messy files: it must reach an
 * Answer well within the default 30 rounds, no cell may fail, it must draw
 * figures and charts, and every number of its Answer must occur in an
 * Execute output.
 */

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const examples = path.join(repoRoot, 'workspace-examples');

interface Case {
  name: string;
  workspaceDir: string;
  profile: ModelProfileName;
  /** For folders without an instruction.txt. */
  instruction?: string;
}

/**
 * The shared material as it came (`../shared/data/messy` and the student-loan
 * `data/`, which the examples copy unchanged with their source and licence),
 * without the README and instruction the examples add: copied from the
 * examples into a temporary folder, so that the test does not depend on where
 * the clone sits beside `shared/`.
 */
const bareCopies = path.join(os.tmpdir(), `datalyst-offline-bare-${process.pid}`);
async function copyBare(example: string): Promise<void> {
  await cp(path.join(examples, example), path.join(bareCopies, example), {
    recursive: true,
    filter: (source) => !['README.md', 'instruction.txt'].includes(path.basename(source)),
  });
}

const cases: Case[] = [
  { name: 'sales', workspaceDir: path.join(examples, 'sales'), profile: 'chat' },
  { name: 'time-series', workspaceDir: path.join(examples, 'time-series'), profile: 'deepanalyze' },
  { name: 'student-loan', workspaceDir: path.join(examples, 'student-loan'), profile: 'chat' },
  { name: 'messy', workspaceDir: path.join(examples, 'messy'), profile: 'deepanalyze' },
  // The shared material itself (folders without README or instruction), as the issue names it.
  {
    name: 'shared messy',
    workspaceDir: path.join(bareCopies, 'messy'),
    profile: 'chat',
    instruction: 'Describe what these files contain and how clean they are.',
  },
  {
    name: 'shared student-loan',
    workspaceDir: path.join(bareCopies, 'student-loan'),
    profile: 'deepanalyze',
    instruction: 'Generate a data science report.',
  },
];

interface Run {
  result: AnalysisResult;
  records: TraceRecord[];
  executions: ExecutionRecord[];
  runDir: string;
}

let runsDir: string;

beforeAll(async () => {
  runsDir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-offline-'));
  await copyBare('messy');
  await copyBare('student-loan');
});

afterAll(async () => {
  await rm(runsDir, { recursive: true, force: true });
  await rm(bareCopies, { recursive: true, force: true });
});

async function runOffline(
  workspaceDir: string,
  profile: ModelProfileName,
  runName: string,
  givenInstruction?: string,
): Promise<Run> {
  const instruction =
    givenInstruction ?? (await readFile(path.join(workspaceDir, 'instruction.txt'), 'utf8')).trim();
  const runDir = path.join(runsDir, runName);
  const result = await analyze({
    instruction,
    workspaceDir,
    model: createOfflineAnalyst(),
    profile,
    outDir: runDir,
  });
  const records = (await readTrace(path.join(runDir, 'trace.jsonl'))).records;
  const executions = records.filter((record): record is ExecutionRecord => record.type === 'execution');
  return { result, records, executions, runDir };
}

describe.each(cases)('the offline analyst on $name', ({ name, workspaceDir, profile, instruction }) => {
  let run: Run;

  beforeAll(async () => {
    run = await runOffline(workspaceDir, profile, name.replace(/\W+/g, '-'), instruction);
  }, 600_000);

  it('reaches an Answer well within the default 30 rounds', () => {
    expect(run.result.termination.reason).toBe('answered');
    expect(run.result.rounds).toBeLessThanOrEqual(17);
    expect(run.executions.length).toBeGreaterThanOrEqual(8);
  });

  it('runs every cell without an error', () => {
    const failures = run.executions
      .filter((execution) => execution.result.status !== 'ok')
      .map(
        (execution) =>
          `${execution.outputId}: ${execution.result.status} ${execution.result.error?.value ?? ''}`,
      );
    expect(failures).toEqual([]);
  });

  it('draws matplotlib figures and vega-lite charts', () => {
    const figures = run.executions.reduce((sum, execution) => sum + execution.result.figures.length, 0);
    const charts = run.executions.reduce((sum, execution) => sum + execution.result.charts.length, 0);
    expect(figures).toBeGreaterThanOrEqual(4);
    expect(charts).toBeGreaterThanOrEqual(1);
  });

  it('states only numbers that an Execute output printed', () => {
    const answer = run.result.answer ?? '';
    expect(answer.length).toBeGreaterThan(200);
    expect(
      numbersMissingFrom(
        answer,
        run.executions.map((execution) => execution.executeText),
      ),
    ).toEqual([]);
  });

  it('says plainly that no language model was used', () => {
    expect(run.result.answer).toContain('No language model was used.');
    const start = run.records.find((record) => record.type === 'run-start');
    expect(start?.type === 'run-start' && start.model).toMatchObject({
      id: 'datalyst-offline-analyst',
      offline: true,
    });
  });
});

describe('what the offline analyst finds', () => {
  const findings = new Map<string, Run>();

  beforeAll(async () => {
    for (const name of ['sales', 'time-series', 'student-loan', 'messy']) {
      findings.set(name, await runOffline(path.join(examples, name), 'chat', `findings-${name}`));
    }
  }, 600_000);

  it('breaks revenue down by the columns the sales instruction names', () => {
    const answer = findings.get('sales')?.result.answer ?? '';
    expect(answer).toContain('## What the instruction asks about');
    expect(answer).toMatch(/By `region` in `orders\.csv`: .* largest total `revenue`/);
    expect(answer).toMatch(/`discount_pct` and `units` \(`orders\.csv`\): r = 0\.\d+/);
  });

  it('says each thing once: a shape, a file not read, a finding two steps printed alike', () => {
    for (const name of ['sales', 'time-series', 'student-loan', 'messy']) {
      const answer = findings.get(name)?.result.answer ?? '';
      const bullets = answer.split('\n').filter((line) => line.startsWith('- '));
      expect(new Set(bullets).size, name).toBe(bullets.length);
      // A table's shape is in the load step's list; the overview adds its kinds of columns, not the shape again.
      const shapes = bullets.map((line) => /^- (`[^`]+`): \d+ rows? ×/.exec(line)?.[1]).filter(Boolean);
      expect(new Set(shapes).size, name).toBe(shapes.length);
    }
    const sales = findings.get('sales')?.result.answer ?? '';
    expect(sales).toContain(
      '- `orders.csv` (4 number, 4 category, 1 datetime, 1 id columns): 49 missing values in 1 column;',
    );
    // README.md is in the "Not read" line with why; its profile note ("A text file of …") is not a second line.
    expect(sales).toContain('Not read: `README.md` (text, not a table)');
    expect(sales).not.toContain('`README.md`: A text file');
  });

  it('finds the spike and the outage planted in the time series', () => {
    const answer = findings.get('time-series')?.result.answer ?? '';
    expect(answer).toContain('2023-03-14 stands out');
    expect(answer).toContain('2022-10-02 stands out');
  });

  it('backs a skew with the median and mean only when they agree with it', () => {
    for (const { result } of findings.values()) {
      for (const claim of (result.answer ?? '').matchAll(
        /skewed to the (right|left)[^:]*: skewness [-\d.]+, median (-?[\d,]+(?:\.\d+)?) against a mean of (-?[\d,]+(?:\.\d+)?)/g,
      )) {
        const [, side, median, mean] = claim;
        const [m, a] = [Number(median?.replaceAll(',', '')), Number(mean?.replaceAll(',', ''))];
        // A right skew has its mean above the median ("median 3375.5 against a mean of 3353.0" said the opposite).
        expect(side === 'right' ? a > m : a < m, claim[0]).toBe(true);
      }
    }
  });

  it('says which tables of the SQLite file it leaves out, in words a reader knows', () => {
    const run = findings.get('student-loan');
    const steps = (run?.records ?? []).flatMap((record) => (record.type === 'step' ? [record.text] : []));
    expect(steps.join('\n')).toMatch(
      /Only the first 8 of the 10 sheets or tables of student_loan\.sqlite are loaded \(the analysis lists at most 8 per file\); the other 2 are not analysed\./,
    );
    expect(steps.join('\n')).not.toContain('The profile listed only some sheets');
    expect(run?.result.answer ?? '').not.toContain('loadCode');
  });

  it('joins the student-loan tables on their shared key and sets the duplicates aside', () => {
    const answer = findings.get('student-loan')?.result.answer ?? '';
    expect(answer).toContain('18 tables repeat another table exactly');
    expect(answer).toMatch(/tables share the key `name`/);
    expect(answer).toMatch(/`unemployed` differs by `no_payment_due\.bool`/);
  });

  it('loads every table of the messy files, with real columns', () => {
    const answer = findings.get('messy')?.result.answer ?? '';
    expect(answer).toContain('5 tables loaded from 3 files.');
    expect(answer).toMatch(/`weird_head_padding\.csv`: \d+ rows × ([4-9]|\d\d) columns/);
    expect(answer).toMatch(/`spanish_chars\.csv`: \d+ rows × 8 columns/);
  });

  it('gives the report a fully grounded answer', async () => {
    const run = findings.get('sales');
    if (run === undefined) throw new Error('the sales run is missing');
    const rendered = await renderRunFolder(run.runDir, { formats: ['html'] });
    expect(rendered.grounding.checked).toBeGreaterThan(50);
    expect(rendered.grounding.unverified).toBe(0);
  });

  it('makes the same turns for the same workspace', async () => {
    const again = await runOffline(path.join(examples, 'time-series'), 'chat', 'time-series-again');
    const turns = (run: Run | undefined): string[] =>
      (run?.records ?? [])
        .filter((record): record is ModelTurnRecord => record.type === 'model-turn')
        .map((record) => record.text);
    expect(turns(again)).toEqual(turns(findings.get('time-series')));
    expect(turns(again).length).toBeGreaterThan(8);
  }, 300_000);
});
