import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderReport } from '../../src/report/index.ts';
import { outcomePresentation } from '../../src/report/outcome-look.ts';
import { buildRunView } from '../../src/report/run-view.ts';
import type { TraceRecord } from '../../src/trace/schema.ts';
import { makeSyntheticTrace } from '../fixtures/traces/synthetic-trace.ts';

// A report served by `datalyst serve` is read by someone who asks again in the thread: no command, flag or
// workspace folder of the server's machine in its advice.

type Reason =
  | 'max-rounds'
  | 'context-budget'
  | 'deadline'
  | 'no-progress'
  | 'repeated-failure'
  | 'model-unavailable'
  | 'sandbox-failure'
  | 'cancelled'
  | 'no-data'
  | 'asked';

const endedWith = (reason: Reason): TraceRecord[] =>
  makeSyntheticTrace({ rounds: 1, outcome: 'max-rounds', charts: 0, figures: 0 }).records.map(
    (record): TraceRecord =>
      record.type === 'run-end' ? { ...record, answer: null, termination: { reason, detail: '' } } : record,
  );
const incomplete = makeSyntheticTrace({ rounds: 1, outcome: 'incomplete', charts: 0, figures: 0 }).records;
const commandLine = /datalyst |--[a-z]|npm run|workspace folder|run folder/;

describe('the advice of an unanswered run', () => {
  const reasons: Reason[] = [
    'max-rounds',
    'context-budget',
    'deadline',
    'no-progress',
    'repeated-failure',
    'model-unavailable',
    'sandbox-failure',
    'cancelled',
    'no-data',
    'asked',
  ];

  it('names no command or flag for someone asking a server, and always says what to do', () => {
    for (const records of [...reasons.map(endedWith), incomplete]) {
      const { todo } = outcomePresentation(buildRunView(records), 'server');
      expect(todo).toMatch(/\w/);
      expect(todo).not.toMatch(commandLine);
    }
  });

  it('keeps the command line its flags and commands', () => {
    const cli = (records: TraceRecord[]) => outcomePresentation(buildRunView(records)).todo ?? '';
    expect(cli(endedWith('max-rounds'))).toContain('--max-rounds');
    expect(cli(endedWith('deadline'))).toContain('--deadline');
    expect(cli(endedWith('sandbox-failure'))).toContain('npm run setup');
    expect(cli(incomplete)).toContain('datalyst report');
  });

  it('reaches the HTML and Markdown reports a server renders', async () => {
    const outDir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-audience-'));
    try {
      await renderReport(endedWith('max-rounds'), { outDir, formats: ['html', 'md'], audience: 'server' });
      for (const file of ['report.html', 'report.md']) {
        const text = await readFile(path.join(outDir, file), 'utf8');
        expect(text, file).toContain('Ask a narrower question in the thread');
        expect(text, file).not.toContain('--max-rounds');
      }
    } finally {
      await rm(outDir, { recursive: true, force: true });
    }
  });
});
