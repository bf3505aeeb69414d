import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildRunView } from '../../src/report/run-view.ts';
import { readTrace } from '../../src/trace/reader.ts';
import { splitTurns } from '../../src/trace/turns.ts';

const fixture = path.join(import.meta.dirname, '../fixtures/traces/v1/student-loan.v1.trace.jsonl');

describe('a version 1 trace (one question, no turn records)', () => {
  it('still reads, as one turn whose question is the instruction', async () => {
    const trace = await readTrace(fixture);
    expect(trace.version).toBe(1);
    expect(trace.partial).toBe(false);
    expect(trace.records.some((record) => record.type === 'turn-start')).toBe(false);
    const turns = splitTurns(trace.records);
    expect(turns).toHaveLength(1);
    expect(turns[0]?.question).toBe('Generate a data science report.');
    expect(turns[0]?.records.filter((record) => record.type === 'execution')).toHaveLength(7);
  });

  it('folds into a report view with one turn ended by its run-end', async () => {
    const view = buildRunView((await readTrace(fixture)).records);
    expect(view.turns).toHaveLength(1);
    expect(view.turns[0]).toMatchObject({ turn: 1, termination: { reason: 'answered' } });
    expect(view.turns[0]?.executions).toHaveLength(7);
    expect(view.outcome).toBe('answered');
    expect(view.process.some((entry) => entry.kind === 'turn')).toBe(false);
  });
});
