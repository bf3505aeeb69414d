import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { LanguageModel, ModelChunk, ModelRequest } from '../../src/agent/index.ts';
import {
  checkCitations,
  deepAnalyze,
  EvidenceBank,
  readDeepRecord,
  streamDeepAnalysis,
  type DeepAnalyzeOptions,
  type DeepRoles,
  type OutlineDraft,
  type WriteInput,
} from '../../src/deep/index.ts';
import { ConfigError } from '../../src/errors/index.ts';
import type { ExecutionRecord } from '../../src/trace/index.ts';
import { createFakeSandbox, printed, testProfile } from '../agent/support/fake-session.ts';
import { useTempDirs } from '../support/temp-dirs.ts';

/** The engine's bookkeeping with in-process roles and sandboxes: budgets, gaps, endings, the bank. */

const tempDirs = useTempDirs();

async function folders(): Promise<{ workspaceDir: string; outDir: string }> {
  const root = await tempDirs.make('datalyst-deep-unit-');
  const workspaceDir = path.join(root, 'ws');
  await import('node:fs/promises').then((fs) => fs.mkdir(workspaceDir));
  await writeFile(path.join(workspaceDir, 'sales.csv'), 'region,revenue\nnorth,1234\n');
  return { workspaceDir, outDir: path.join(root, 'deep') };
}

/** A sub-analyst: one cell that prints 1234, then an answer. */
const subAnalyst: LanguageModel = {
  id: 'scripted-sub-analyst',
  contextWindowTokens: 32_000,
  async *stream(request: ModelRequest): AsyncIterable<ModelChunk> {
    const replies = request.messages.filter((message) => message.role === 'assistant').length;
    yield {
      type: 'text-delta',
      text: replies === 0 ? '<Code>print(1234)</Code>' : '<Answer>It is 1234.</Answer>',
    };
    yield { type: 'usage', promptTokens: 100, completionTokens: 10 };
    yield { type: 'finish', reason: 'stop' };
  },
};

function roles(overrides: Partial<DeepRoles> = {}): DeepRoles & { writes: WriteInput[] } {
  const writes: WriteInput[] = [];
  return {
    modelId: 'scripted',
    offline: false,
    writes,
    scope: async (input) => ({
      brief: {
        question: input.question,
        questions: [{ question: 'Revenue?', tables: ['sales.csv'] }],
        goodAnswer: '',
      },
    }),
    supervise: async () => [
      { question: 'Revenue of the north?', tables: ['sales.csv'] },
      { question: 'Revenue of the south?', tables: ['sales.csv'] },
    ],
    subAnalystModel: () => subAnalyst,
    compress: async (input) =>
      input.executions.map((execution) => ({
        claim: `${input.subQuestion.id} printed 1,234.`,
        outputs: [execution.outputId],
        figures: [],
      })),
    plan: async (input): Promise<OutlineDraft> => ({
      sections: [
        { title: 'All', purpose: 'Everything.', evidenceIds: input.evidence.map((item) => item.id) },
      ],
      gaps: [],
    }),
    write: async (input) => {
      writes.push(input);
      return `The revenue is 1,234 ${input.evidence.map((item) => `[${item.id}]`).join('')}.`;
    },
    ...overrides,
  };
}

async function run(options: Partial<DeepAnalyzeOptions> & { roles: DeepRoles }) {
  const { workspaceDir, outDir } = await folders();
  const sandbox = createFakeSandbox({ run: () => printed('1234\n') });
  const result = await deepAnalyze({
    instruction: 'Report on revenue.',
    workspaceDir,
    outDir,
    model: subAnalyst,
    createSandbox: sandbox.factory,
    concurrency: 2,
    ...options,
  });
  return { result, sandbox, outDir };
}

describe('the deep engine', () => {
  it('answers: sub-analyses banked, one outline, sections from their evidence; every session closed', async () => {
    const { result, sandbox, outDir } = await run({ roles: roles() });
    expect(result.termination.reason).toBe('answered');
    const record = await readDeepRecord(outDir);
    expect(record?.subAnalyses.map((sub) => [sub.id, sub.outcome, sub.evidenceIds])).toEqual([
      ['S1', 'answered', ['EV1']],
      ['S2', 'answered', ['EV2']],
    ]);
    expect(record?.evidence[0]).toMatchObject({
      outputs: ['S1:E1'],
      numbers: [{ text: '1,234', output: 'S1:E1', verified: true }],
    });
    expect(record?.sections[0]).toMatchObject({ citedEvidenceIds: ['EV1', 'EV2'], error: null });
    // Both cited outputs printed 1,234 in the same words: the tie goes to the latest one.
    expect(record?.sections[0]?.numbers).toEqual([{ text: '1,234', output: 'S2:E1', verified: true }]);
    // The workspace was profiled once, a part per session that runs at once (one per core at most), and
    // those sessions went on to serve the sub-analyses, which did not profile it again.
    const parts = Math.min(2, os.availableParallelism());
    expect(sandbox.sessions).toHaveLength(2);
    expect(sandbox.sessions.map((session) => session.profiled)).toEqual(
      parts === 2 ? [[{ index: 0, count: 2 }], [{ index: 1, count: 2 }]] : [[{ index: 0, count: 1 }], []],
    );
    expect(sandbox.sessions.every((session) => session.closed)).toBe(true);
    expect(record?.usage.promptTokens).toBeGreaterThan(0);
  });

  it("starts the next sub-analysis while the last one's sandbox is still going, and ends once every one has gone", async () => {
    const { workspaceDir, outDir } = await folders();
    let letGo = (): void => undefined;
    const sandbox = createFakeSandbox({
      run: () => printed('1234\n'),
      closing: new Promise<void>((resolve) => (letGo = resolve)),
    });
    const started: string[] = [];
    let ended = false;
    const running = deepAnalyze({
      instruction: 'Report on revenue.',
      workspaceDir,
      outDir,
      model: subAnalyst,
      roles: roles(),
      createSandbox: sandbox.factory,
      concurrency: 1,
      onEvent: (event) => {
        if (event.type === 'sub-analysis-start') started.push(event.subQuestion.id);
      },
    }).finally(() => (ended = true));
    // One at a time, and no sandbox has gone yet: S2 ran all the same.
    await vi.waitFor(() => expect(started).toEqual(['S1', 'S2']));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(sandbox.sessions.some((session) => session.closed)).toBe(false);
    expect(ended).toBe(false);
    letGo();
    const { record } = await running;
    expect(record.termination.reason).toBe('answered');
    expect(sandbox.sessions.length).toBe(2);
    expect(sandbox.sessions.every((session) => session.closed)).toBe(true);
  });

  it('sends sub-analysts after the planner gaps within the budget; the rest are skipped and the ending says so', async () => {
    let rounds = 0;
    const planned = roles({
      plan: async (input) => {
        rounds += 1;
        return {
          sections: [{ title: 'All', purpose: '', evidenceIds: input.evidence.map((item) => item.id) }],
          gaps:
            input.round < input.maxRounds
              ? [
                  { question: 'Gap one?', tables: [] },
                  { question: 'Gap two?', tables: [] },
                ]
              : [],
        };
      },
    });
    const { result } = await run({ roles: planned, maxSubAnalyses: 3, maxPlanningRounds: 2 });
    expect(rounds).toBe(2);
    expect(result.termination.reason).toBe('max-sub-analyses');
    expect(result.record.subAnalyses.map((sub) => [sub.id, sub.round, sub.outcome])).toEqual([
      ['S1', 0, 'answered'],
      ['S2', 0, 'answered'],
      ['S3', 1, 'answered'],
      ['S4', 1, 'skipped'],
    ]);
    expect(result.record.outline?.rounds).toBe(2);
    expect(result.record.sections[0]?.citedEvidenceIds).toEqual(['EV1', 'EV2', 'EV3']);
  });

  it('a failed planner still shows the evidence, one section per sub-analysis, and the run says it failed', async () => {
    const { result } = await run({
      roles: roles({
        plan: async () => {
          throw new Error('the planner broke');
        },
      }),
    });
    expect(result.termination.reason).toBe('failed');
    expect(result.termination.detail).toContain('the planner broke');
    // Evidence ids follow the sub-questions' order, whichever sub-analysis ended first.
    expect(result.record.sections.map((section) => [section.title, section.citedEvidenceIds])).toEqual([
      ['Revenue of the north?', ['EV1']],
      ['Revenue of the south?', ['EV2']],
    ]);
    expect(result.record.sections[0]?.error).toContain('the planner broke');
  });

  it('a writer sees only its section evidence; a failed writer leaves its evidence listed', async () => {
    const written = roles({
      plan: async () => ({
        sections: [
          { title: 'North', purpose: '', evidenceIds: ['EV1', 'EV99'] },
          { title: 'South', purpose: '', evidenceIds: ['EV2'] },
        ],
        gaps: [],
      }),
    });
    const failing = {
      ...written,
      write: async (input: WriteInput) =>
        input.section.title === 'South'
          ? Promise.reject(new Error('no'))
          : written.write(input, { signal: new AbortController().signal, onUsage: () => {} }),
    };
    const { result } = await run({ roles: failing });
    expect(
      written.writes.map((input) => [input.section.title, input.evidence.map((item) => item.id)]),
    ).toEqual([['North', ['EV1']]]);
    // EV99 does not exist: the outline cites only what the bank holds.
    expect(result.record.outline?.sections[0]?.evidenceIds).toEqual(['EV1']);
    expect(result.record.sections[1]).toMatchObject({
      error: 'The writer failed: no',
      citedEvidenceIds: ['EV2'],
    });
    expect(result.record.sections[1]?.markdown).toBe('- S2 printed 1,234. [EV2]');
    expect(result.termination.reason).toBe('answered');
  });

  it('a spent token budget stops research and writes from what exists', async () => {
    const { result } = await run({ roles: roles(), tokenBudget: 50, concurrency: 1 });
    expect(result.termination.reason).toBe('token-budget');
    expect(result.record.subAnalyses.map((sub) => sub.outcome)).toEqual(['answered', 'skipped']);
    expect(result.record.sections).toHaveLength(1);
  });

  it('ends no-data before any role when nothing is readable, and asked when the scope step asks', async () => {
    const { workspaceDir, outDir } = await folders();
    const empty = createFakeSandbox({ profile: { truncated: false, files: [] } });
    const noData = await deepAnalyze({
      instruction: 'x',
      workspaceDir,
      outDir,
      model: subAnalyst,
      roles: roles(),
      createSandbox: empty.factory,
    });
    expect(noData.termination.reason).toBe('no-data');
    expect(empty.sessions.every((session) => session.closed)).toBe(true);

    const asked = await run({ roles: roles({ scope: async () => ({ ask: 'Which year?' }) }), mayAsk: true });
    expect(asked.result.termination.reason).toBe('asked');
    expect(asked.result.record.ask).toBe('Which year?');
  });

  it('refuses a folder that already holds a deep run, and streams the same events it reports', async () => {
    const { outDir, workspaceDir } = await folders();
    const sandbox = createFakeSandbox({ run: () => printed('1234\n'), profile: testProfile });
    const types: string[] = [];
    for await (const event of streamDeepAnalysis({
      instruction: 'x',
      workspaceDir,
      outDir,
      model: subAnalyst,
      roles: roles(),
      createSandbox: sandbox.factory,
    }))
      types.push(event.type);
    expect(types[0]).toBe('deep-start');
    expect(types.at(-1)).toBe('deep-end');
    expect(types).toContain('sub-analysis-end');
    await expect(
      deepAnalyze({
        instruction: 'x',
        workspaceDir,
        outDir,
        model: subAnalyst,
        roles: roles(),
        createSandbox: sandbox.factory,
      }),
    ).rejects.toBeInstanceOf(ConfigError);
  });
});

describe('the evidence bank', () => {
  const execution = (outputId: string, stdout: string, figures = 0): ExecutionRecord => ({
    type: 'execution',
    round: 1,
    at: new Date().toISOString(),
    outputId,
    code: '',
    executeText: '',
    result: {
      ...printed(stdout),
      figures: Array.from({ length: figures }, (_, index) => ({
        id: `f${index}`,
        mimeType: 'image/png' as const,
        dataBase64: 'AA==',
        widthPx: 1,
        heightPx: 1,
      })),
    } as ExecutionRecord['result'],
  });

  it('grounds a claim against the outputs it cites only, namespaces them, and drops what does not resolve', () => {
    const bank = new EvidenceBank();
    const banked = bank.add(
      'S2',
      [
        {
          claim: 'Mean 42.5 and total 170.',
          outputs: ['E1', 'S2:E2', 'S1:E1', 'E9'],
          figures: ['E2#figure0', 'E2#figure3', 'E1#chart0'],
        },
        { claim: '  ', outputs: [], figures: [] },
      ],
      [execution('E1', 'mean 42.5\n'), execution('E2', 'total 170\n', 1), execution('E3', 'other 99.5\n')],
    );
    expect(banked.items).toHaveLength(1);
    expect(banked.items[0]).toMatchObject({
      id: 'EV1',
      outputs: ['S2:E1', 'S2:E2'],
      figures: ['S2:E2#figure0'],
      numbers: [
        { text: '42.5', output: 'S2:E1', verified: true },
        { text: '170', output: 'S2:E2', verified: true },
      ],
    });
    expect(banked.dropped).toEqual(['S1:E1', 'E9', 'E2#figure3', 'E1#chart0']);
    // 99.5 was printed, but by an output the claim does not cite.
    expect(bank.ground('It is 99.5.', ['S2:E1'])).toEqual([{ text: '99.5', output: null, verified: false }]);
  });

  it('keeps only the citations a section was given', () => {
    expect(checkCitations('A [EV1], B [EV2, EV3] and [EV4].', new Set(['EV1', 'EV3']))).toEqual({
      markdown:
        "A [EV1], B [EV3] (EV2: not among this section's evidence) and  (EV4: not among this section's evidence).",
      cited: ['EV1', 'EV3'],
    });
  });
});
