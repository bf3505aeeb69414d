import { mkdirSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultMaxTraceFigureBytes } from '../../src/agent/trace-figure-budget.ts';
import { SandboxUnavailableError } from '../../src/errors/index.ts';
import type { Chart, Figure } from '../../src/sandbox/cell-result.ts';
import { parseTraceDocument } from '../../src/trace/reader.ts';
import type { TraceRecord } from '../../src/trace/schema.ts';
import { cellResult, failedWith, testProfile } from './support/fake-session.ts';
import { cleanUpHarness, eventTypes, runLoop } from './support/loop-harness.ts';

/**
 * What a run keeps bounded, whatever the kernel sends: the text that reaches
 * the model, the figures kept in the trace, and its ending (always run-end).
 */

afterEach(cleanUpHarness);

const codeTurn = (code: string) => ({
  type: 'text' as const,
  text: `<Analyze>Next.</Analyze>\n<Code>\n${code}\n</Code>`,
});
const answerTurn = (answer: string) => ({ type: 'text' as const, text: `<Answer>${answer}</Answer>` });

function recordsOf<T extends TraceRecord['type']>(trace: readonly TraceRecord[], type: T) {
  return trace.filter((record): record is Extract<TraceRecord, { type: T }> => record.type === type);
}

const MiB = 1024 * 1024;

/** A figure of `base64Chars` characters (valid, padded base64; not a real PNG, which the loop never decodes). */
function figure(id: string, base64Chars: number): Figure {
  return { id, mimeType: 'image/png', dataBase64: 'A'.repeat(base64Chars), widthPx: 640, heightPx: 480 };
}

describe('figures and charts in the trace', () => {
  it('a figure-heavy run past 512 MiB of figures still ends with run-end and a readable trace.json (default cap)', async () => {
    // 40 cells of two 8 MiB figures: 640 MiB of base64, past V8's largest string.
    // One string shared by every figure, so the test itself stays small in memory.
    const big = 'A'.repeat(8 * MiB);
    const cells = 40;
    const run = await runLoop({
      server: { script: [], whenExhausted: codeTurn('plot()') },
      session: {
        run: (_code, index) =>
          cellResult({
            figures: [1, 2].map((n) => ({
              id: `figure-${index}-${n}`,
              mimeType: 'image/png' as const,
              dataBase64: big,
              widthPx: 4000,
              heightPx: 3000,
            })),
          }),
      },
      analyze: { maxRounds: cells },
    });
    expect(eventTypes(run.events).at(-1)).toBe('run-end');
    expect(run.result.termination.reason).toBe('max-rounds');

    const executions = recordsOf(run.trace, 'execution');
    expect(executions).toHaveLength(cells - 1);
    const figures = executions.flatMap((execution) => execution.result.figures);
    const kept = figures.filter((item) => !('omitted' in item));
    const omitted = figures.filter((item) => 'omitted' in item);
    expect(kept.length * 8 * MiB).toBeLessThanOrEqual(defaultMaxTraceFigureBytes);
    expect(kept).toHaveLength(Math.floor(defaultMaxTraceFigureBytes / (8 * MiB)));
    expect(omitted[0]).toEqual({
      id: expect.stringMatching(/^figure-/),
      mimeType: 'image/png',
      dataBase64: '',
      widthPx: 4000,
      heightPx: 3000,
      omitted: true,
      sizeBytes: 8 * MiB,
    });
    const jsonlBytes = (await stat(path.join(run.runDir, 'trace.jsonl'))).size;
    expect(jsonlBytes).toBeLessThan(defaultMaxTraceFigureBytes + 2 * MiB);
    const document = parseTraceDocument(await readFile(path.join(run.runDir, 'trace.json'), 'utf8'));
    expect(document.partial).toBe(false);
    expect(document.records).toHaveLength(run.trace.length);
    expect(
      recordsOf(run.trace, 'notice').filter((notice) => notice.text.includes('not kept in the trace')),
    ).not.toHaveLength(0);
  });

  it('keeps figures and charts within maxTraceFigureBytes; past it, each keeps its place, id and size, and a notice names what was left out', async () => {
    const spec = {
      mark: 'point',
      data: { values: Array.from({ length: 2000 }, (_, x) => ({ x, y: x * 2 })) },
    };
    const chart: Chart = { id: 'chart-1', spec };
    const specBytes = Buffer.byteLength(JSON.stringify(spec));
    const run = await runLoop({
      server: { script: [codeTurn('a()'), codeTurn('b()'), answerTurn('done')] },
      session: {
        run: (_code, index) =>
          index === 0
            ? cellResult({ figures: [figure('figure-1-1', 600 * 1024)], charts: [chart] })
            : cellResult({ figures: [figure('figure-2-1', 600 * 1024), figure('figure-2-2', 1024)] }),
      },
      analyze: { maxTraceFigureBytes: 600 * 1024 + specBytes + 2048 },
    });
    expect(run.result.termination.reason).toBe('answered');
    const [first, second] = recordsOf(run.trace, 'execution');
    expect(first?.result.figures[0]?.dataBase64).toHaveLength(600 * 1024);
    expect(first?.result.charts[0]).toEqual(chart);
    // The second cell's large figure does not fit; the small one after it still does.
    expect(second?.result.figures).toEqual([
      { ...figure('figure-2-1', 0), omitted: true, sizeBytes: 600 * 1024 },
      figure('figure-2-2', 1024),
    ]);
    const notices = recordsOf(run.trace, 'notice').filter((notice) => notice.text.includes('not kept'));
    expect(notices.map((notice) => notice.text)).toEqual([
      expect.stringMatching(
        /^1 figure of E2 \(600 KiB\) not kept in the trace: the run's cap of \d{3} KiB of figures and charts is spent\.$/,
      ),
    ]);
    // The notice is streamed as an event too, right after the execution it is about.
    const types = eventTypes(run.events);
    expect(types[types.lastIndexOf('execution-end') + 1]).toBe('notice');
  });

  it('marks an omitted chart with an empty spec', async () => {
    const run = await runLoop({
      server: { script: [codeTurn('c()'), answerTurn('done')] },
      session: { run: () => cellResult({ charts: [{ id: 'chart-1', spec: { mark: 'bar' } }] }) },
      analyze: { maxTraceFigureBytes: 0 },
    });
    expect(recordsOf(run.trace, 'execution')[0]?.result.charts).toEqual([
      { id: 'chart-1', spec: {}, omitted: true, sizeBytes: Buffer.byteLength('{"mark":"bar"}') },
    ]);
    // The event still carries the whole result: the cap is the trace's.
    const end = run.events.find((event) => event.type === 'execution-end');
    expect(end?.type === 'execution-end' && end.result.charts[0]?.spec).toEqual({ mark: 'bar' });
  });
});

describe('the end of the trace', () => {
  it('when trace.json cannot be written, the run still ends with run-end and trace.jsonl says why', async () => {
    const run = await runLoop({
      server: { script: [answerTurn('42')] },
      // A folder where trace.json should go: the rename onto it fails. Made once the run
      // has its folder (a run folder that holds anything beforehand is refused).
      onEvent: (event) => {
        if (event.type === 'run-start')
          mkdirSync(path.join(event.outDir, 'trace.json', 'in-the-way'), { recursive: true });
      },
    });
    expect(eventTypes(run.events).slice(-2)).toEqual(['notice', 'run-end']);
    expect(run.result).toMatchObject({ answer: '42', termination: { reason: 'answered' } });
    expect(run.trace.map((record) => record.type).slice(-2)).toEqual(['run-end', 'notice']);
    expect(recordsOf(run.trace, 'notice').at(-1)?.text).toMatch(
      /Could not write .*trace\.json.*trace\.jsonl holds/,
    );
  });
});

describe('the end of the run', () => {
  it('a session that fails to close leaves a clipped notice, and the run still ends with run-end', async () => {
    const run = await runLoop({
      server: { script: [answerTurn('42')] },
      session: { closeError: new Error(`engine stalled ${'x'.repeat(100_000)}`) },
    });
    expect(eventTypes(run.events).at(-1)).toBe('run-end');
    const notice = recordsOf(run.trace, 'notice').find((record) =>
      record.text.includes('could not be closed'),
    );
    expect(notice?.text.length).toBeLessThan(1_200);
    expect(run.trace.at(-1)?.type).toBe('run-end');
  });
});

describe('the run-start record', () => {
  it('records the DATALYST_* limits when the session cannot be opened (not the bare defaults)', async () => {
    const saved = { ...process.env };
    process.env.DATALYST_MEMORY_MB = '777';
    process.env.DATALYST_CELL_TIMEOUT_MS = '33000';
    try {
      const run = await runLoop({
        server: { script: [answerTurn('never asked')] },
        analyze: {
          createSandbox: () => Promise.reject(new SandboxUnavailableError('no engine', { fix: 'start it' })),
          sandbox: { limits: { cpus: 0.5 } },
        },
      });
      expect(run.result.termination.reason).toBe('sandbox-failure');
      expect(recordsOf(run.trace, 'run-start')[0]?.limits).toMatchObject({
        memoryMb: 777,
        cellTimeoutMs: 33_000,
        cpus: 0.5,
      });
    } finally {
      process.env = saved;
    }
  });

  it('names the image the session says it runs, and only the chosen one when no session opened', async () => {
    const opened = await runLoop({
      server: { script: [answerTurn('ok')] },
      session: { image: 'datalyst/python-runner:from-session' },
      analyze: { sandbox: { image: 'ignored-when-the-session-says' } },
    });
    expect(recordsOf(opened.trace, 'run-start')[0]?.environment.image).toBe(
      'datalyst/python-runner:from-session',
    );
    const failed = await runLoop({
      server: { script: [answerTurn('never asked')] },
      analyze: {
        createSandbox: () => Promise.reject(new SandboxUnavailableError('no engine', { fix: 'start it' })),
        sandbox: { image: 'chosen/image:1' },
      },
    });
    expect(recordsOf(failed.trace, 'run-start')[0]?.environment.image).toBe('chosen/image:1');
  });

  it('is written even when the DATALYST_* environment is malformed (the run ends as sandbox-failure, not with a trace that has no start)', async () => {
    const saved = { ...process.env };
    process.env.DATALYST_MEMORY_MB = 'lots';
    try {
      const run = await runLoop({
        server: { script: [answerTurn('never asked')] },
        analyze: {
          createSandbox: () => Promise.reject(new SandboxUnavailableError('bad config', { fix: 'fix it' })),
        },
      });
      expect(run.trace[0]?.type).toBe('run-start');
      expect(run.result.termination.reason).toBe('sandbox-failure');
    } finally {
      process.env = saved;
    }
  });
});

describe('kernel text that reaches the model', () => {
  it('the repeated-failure nudge quotes at most 200 characters of a 200 000-character error', async () => {
    const run = await runLoop({
      server: { script: [codeTurn('boom()'), codeTurn('boom()'), answerTurn('gave up')] },
      session: { run: () => failedWith('ValueError', 'v'.repeat(200_000)) },
    });
    const nudges = recordsOf(run.trace, 'notice').filter((notice) => notice.text.includes('failed again'));
    expect(nudges).toHaveLength(1);
    expect(nudges[0]?.text.length).toBeLessThan(500);
    expect(nudges[0]?.text).toContain(`ValueError: ${'v'.repeat(150)}`);
    const third = run.server.completionRequests[2]?.body?.messages ?? [];
    const lastUser = third.at(-1)?.content ?? '';
    expect(lastUser).toContain('The same code failed again');
    // The execute text is capped at 12 000 characters, the nudge at 200 of the error.
    expect(lastUser.length).toBeLessThan(13_000);
  });

  it("a retry notice quotes at most 300 characters of the endpoint's error body", async () => {
    const run = await runLoop({
      server: { script: [{ type: 'error', status: 500, message: 'e'.repeat(100_000) }, answerTurn('ok')] },
    });
    expect(run.result.answer).toBe('ok');
    const retry = recordsOf(run.trace, 'notice').find((notice) => notice.kind === 'retry');
    expect(retry?.text.length).toBeLessThan(400);
  });

  it('the first message clips long column names, load calls, notes and errors from the profile', async () => {
    const [file] = testProfile.files;
    const [table] = file?.tables ?? [];
    const [column] = table?.columns ?? [];
    if (file === undefined || table === undefined || column === undefined) throw new Error('test profile');
    // As long as the sandbox's schema lets through (the kernel itself cuts names at 1 000).
    const longName = 'c'.repeat(4_000);
    const run = await runLoop({
      server: { script: [answerTurn('ok')] },
      session: {
        profile: {
          truncated: false,
          files: [
            {
              ...file,
              error: 'e'.repeat(4_000),
              notes: Array.from({ length: 50 }, () => 'n'.repeat(4_000)),
              tables: [
                {
                  ...table,
                  name: 't'.repeat(4_000),
                  loadCode: `pd.read_csv('${'p'.repeat(60_000)}.csv')`,
                  columns: [{ ...column, name: longName, dtype: 'd'.repeat(1_000), min: 'm'.repeat(1_000) }],
                },
              ],
            },
          ],
        },
      },
    });
    const first = run.server.completionRequests[0]?.body?.messages?.find((message) =>
      message.content.startsWith('# Instruction'),
    );
    expect(first?.content.length).toBeLessThan(6_000);
    expect(first?.content).toContain(`"name":"${'c'.repeat(199)}…"`);
    expect(first?.content).toContain(`"load":"pd.read_csv('ppp`);
  });
});
