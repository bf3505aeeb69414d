import { describe, expect, it } from 'vitest';
import { parseTraceLines } from '../../src/trace/reader.ts';
import { currentInputFiles, inputFileHistory } from '../../src/trace/input-files.ts';
import type { TraceRecord } from '../../src/trace/schema.ts';
import { makeSyntheticTrace } from '../fixtures/traces/synthetic-trace.ts';

const sha = (digit: string) => digit.repeat(64);

/** A thread's trace: one question, then files came, changed and went before the second. */
function traceWithChanges(): TraceRecord[] {
  const [start, ...rest] = makeSyntheticTrace({ rounds: 1 }).records;
  if (start?.type !== 'run-start') throw new Error('no run-start');
  const withFiles: TraceRecord = {
    ...start,
    workspace: {
      path: start.workspace.path,
      files: [
        { path: 'orders.csv', sizeBytes: 10, sha256: sha('a') },
        { path: 'old.csv', sizeBytes: 5, sha256: sha('b') },
      ],
    },
  };
  const at = '2026-01-01T00:00:00.000Z';
  return [
    withFiles,
    ...rest.filter((record) => record.type !== 'run-end'),
    {
      type: 'workspace-change',
      at,
      added: [{ path: 'person.csv', sizeBytes: 7, sha256: sha('c') }],
      changed: [{ path: 'orders.csv', sizeBytes: 12, sha256: sha('d') }],
      removed: [{ path: 'old.csv', sizeBytes: 5, sha256: sha('b') }],
    },
    { type: 'turn-start', turn: 2, at, question: 'Describe the data', replyToAsk: false },
  ];
}

describe('the input files of a thread whose workspace changed', () => {
  it('reads a workspace-change record back from trace.jsonl', () => {
    const records = traceWithChanges();
    const read = parseTraceLines(records.map((record) => JSON.stringify(record)).join('\n'));
    expect(read.records.find((record) => record.type === 'workspace-change')).toMatchObject({
      added: [{ path: 'person.csv' }],
    });
  });

  it('lists every version of every input, each change with the question it came before', () => {
    expect(inputFileHistory(traceWithChanges())).toEqual([
      { path: 'orders.csv', sizeBytes: 10, sha256: sha('a'), change: 'start', beforeTurn: null },
      { path: 'old.csv', sizeBytes: 5, sha256: sha('b'), change: 'start', beforeTurn: null },
      { path: 'person.csv', sizeBytes: 7, sha256: sha('c'), change: 'added', beforeTurn: 2 },
      { path: 'orders.csv', sizeBytes: 12, sha256: sha('d'), change: 'changed', beforeTurn: 2 },
      { path: 'old.csv', sizeBytes: 5, sha256: sha('b'), change: 'removed', beforeTurn: 2 },
    ]);
    expect(currentInputFiles(traceWithChanges())).toEqual([
      { path: 'orders.csv', sizeBytes: 12, sha256: sha('d') },
      { path: 'person.csv', sizeBytes: 7, sha256: sha('c') },
    ]);
  });

  it('a trace without changes (all older ones) lists run-start’s files alone', () => {
    const records = makeSyntheticTrace({ rounds: 1 }).records;
    const start = records[0];
    const files = start?.type === 'run-start' ? start.workspace.files : [];
    expect(inputFileHistory(records)).toEqual(
      files.map((file) => ({ ...file, change: 'start', beforeTurn: null })),
    );
  });
});
