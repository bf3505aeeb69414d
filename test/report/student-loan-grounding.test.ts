import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { prepareReport } from '../../src/report/prepared-report.ts';
import { readTrace } from '../../src/trace/reader.ts';

// DeepAnalyze-8B's real answer on the student-loan workspace: most of its statistics were never computed.
describe("grounding DeepAnalyze's student-loan answer", () => {
  it('verifies the figures the cells printed and flags the invented ones', async () => {
    const trace = await readTrace(join(import.meta.dirname, '../fixtures/traces/student-loan/trace.jsonl'));
    const report = await prepareReport(trace.records);
    const numbers = report.answer?.numbers ?? [];
    const status = (text: string): Array<string | null> =>
      numbers
        .filter((number) => number.text === text)
        .map((number) => (number.verified ? number.outputId : null));
    expect(status('1,194')).toEqual(['E1']);
    expect(status('8.92')).toEqual([null]);
    expect(status('28.7')).toEqual([null]);
    expect(status('0.001').every((outputId) => outputId === null)).toBe(true);
    expect(report.grounding.checked).toBeGreaterThan(100);
    expect(report.grounding.verified).toBeLessThan(report.grounding.checked / 5);
  });
});
