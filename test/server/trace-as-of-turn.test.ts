import { describe, expect, it } from 'vitest';
import { traceAsOfTurn } from '../../src/server/report-cache.ts';
import { parseTraceLines, type TraceRecord } from '../../src/trace/index.ts';

/**
 * A turn's report is the thread's trace as it stood when that turn ended
 * (report-cache.ts). Here on written-out traces of a thread whose server was
 * killed during a turn: with the turn-end a resumed thread appends for it,
 * and without (the thread had not resumed, or an older trace).
 */
const at = '2025-03-01T09:00:00.000Z';
const usage = { promptTokens: 1, completionTokens: 1 };
const turnStart = (turn: number, question: string): TraceRecord => ({
  type: 'turn-start',
  turn,
  at,
  question,
  replyToAsk: false,
});
const turnEnd = (turn: number, reason: 'answered' | 'cancelled' = 'answered'): TraceRecord => ({
  type: 'turn-end',
  turn,
  at,
  rounds: 1,
  usage,
  durationMs: 10,
  termination: { reason, detail: '' },
  answer: reason === 'answered' ? `answer ${turn}` : null,
  ask: null,
});
const step = (round: number, text: string): TraceRecord => ({
  type: 'step',
  round,
  at,
  kind: 'analyze',
  text,
  closed: true,
});
const replay: TraceRecord = {
  type: 'replay',
  at,
  cells: 1,
  replayed: 1,
  durationMs: 5,
  mismatches: [],
  skipped: [],
};
const replayNotice: TraceRecord = { type: 'notice', at, round: 2, kind: 'replay', text: 'Replayed 1 cell.' };
const runStart: TraceRecord = {
  type: 'run-start',
  version: 2,
  runId: 'run-1',
  startedAt: at,
  instruction: 'first question',
  workspace: { path: '/data', files: [] },
  model: { id: 'gpt-test', profile: 'chat', baseUrl: null, offline: false },
  limits: {
    maxRounds: 30,
    cellTimeoutMs: 120_000,
    memoryMb: 2048,
    cpus: 1,
    deadlineMs: null,
    contextBudgetTokens: 28_000,
  },
  environment: { datalystVersion: '0.1.0', nodeVersion: 'v20', sandboxBackend: 'docker', image: null },
};

/** Through the trace's own reader: the records are what a real trace.jsonl holds. */
const trace = (...records: TraceRecord[]): TraceRecord[] =>
  parseTraceLines(records.map((record) => JSON.stringify(record)).join('\n')).records;
const texts = (records: readonly TraceRecord[]): string[] =>
  records.map((record) =>
    record.type === 'turn-start' || record.type === 'turn-end'
      ? `${record.type} ${record.turn}`
      : record.type === 'step'
        ? record.text
        : record.type,
  );

describe('traceAsOfTurn', () => {
  it("ends at the turn's turn-end, whatever came after it", () => {
    const records = trace(runStart, turnStart(1, 'first question'), step(1, 'one'), turnEnd(1));
    const later = trace(...records, turnStart(2, 'second question'), step(2, 'two'), turnEnd(2));
    expect(traceAsOfTurn(later, 1)).toEqual(records);
    expect(traceAsOfTurn(later, 2)).toEqual(later);
  });

  it('a turn a killed server cut: its late turn-end, not the replay and question that resumed the thread', () => {
    const records = trace(
      runStart,
      turnStart(1, 'first question'),
      turnEnd(1),
      turnStart(2, 'second question'),
      step(2, 'two, cut off'),
      // What resume-thread.ts appends for the turn the process did not live to end, then the next question.
      turnEnd(2, 'cancelled'),
      replay,
      replayNotice,
      turnStart(3, 'third question'),
      step(3, 'three'),
      turnEnd(3),
    );
    expect(texts(traceAsOfTurn(records, 2))).toEqual([
      'run-start',
      'turn-start 1',
      'turn-end 1',
      'turn-start 2',
      'two, cut off',
      'turn-end 2',
    ]);
    expect(texts(traceAsOfTurn(records, 3)).slice(-5)).toEqual([
      'replay',
      'notice',
      'turn-start 3',
      'three',
      'turn-end 3',
    ]);
  });

  it('an interrupted turn without a turn-end ends where the replay of the next question began', () => {
    const records = trace(
      runStart,
      turnStart(1, 'first question'),
      step(1, 'one, cut off'),
      replay,
      replayNotice,
      turnStart(2, 'second question'),
      turnEnd(2),
    );
    expect(texts(traceAsOfTurn(records, 1))).toEqual(['run-start', 'turn-start 1', 'one, cut off']);
    // The replay opened turn 2: it is in turn 2's report.
    expect(traceAsOfTurn(records, 2)).toEqual(records);
  });

  it('an interrupted last turn runs to the end of the trace (its report says it has no end)', () => {
    const records = trace(
      runStart,
      turnStart(1, 'first question'),
      turnEnd(1),
      turnStart(2, 'second'),
      step(2, 'two'),
    );
    expect(traceAsOfTurn(records, 2)).toEqual(records);
    expect(texts(traceAsOfTurn(records, 1))).toEqual(['run-start', 'turn-start 1', 'turn-end 1']);
  });

  it('a turn the trace does not hold is the thread before the next one (and before its replay)', () => {
    const records = trace(
      runStart,
      turnStart(1, 'first question'),
      turnEnd(1),
      replay,
      replayNotice,
      turnStart(3, 'third question'),
      turnEnd(3),
    );
    expect(texts(traceAsOfTurn(records, 2))).toEqual(['run-start', 'turn-start 1', 'turn-end 1']);
  });

  it('a one-question (version 1) run resumed as a thread: its turn 1 has no turn records, and ends before the replay', () => {
    const runEnd: TraceRecord = {
      type: 'run-end',
      endedAt: at,
      durationMs: 10,
      rounds: 1,
      usage,
      termination: { reason: 'answered', detail: '' },
      answer: 'answer 1',
    };
    const records = trace(
      runStart,
      step(1, 'one'),
      runEnd,
      replay,
      replayNotice,
      turnStart(2, 'second'),
      turnEnd(2),
    );
    expect(texts(traceAsOfTurn(records, 1))).toEqual(['run-start', 'one', 'run-end']);
  });
});
