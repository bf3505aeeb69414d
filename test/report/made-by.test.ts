import { describe, expect, it } from 'vitest';
import { madeBy } from '../../src/report/made-by.ts';
import { buildRunView } from '../../src/report/run-view.ts';
import { renderReport } from '../../src/report/index.ts';
import type { RunStartRecord } from '../../src/trace/schema.ts';
import { makeSyntheticTrace } from '../fixtures/traces/synthetic-trace.ts';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A re-run's report does not say it was made by the offline analyst in 0 rounds, choosing cells. */
/** A re-run's trace: a re-run asks no model, so it has no model turn unless one rewrote the answer. */
function rerunTrace(offline = true, rewritten = false) {
  const trace = makeSyntheticTrace({ rounds: 2, charts: 0, figures: 0, offline });
  const start = trace.records[0] as RunStartRecord;
  start.rerunOf = {
    runId: 'run-earlier',
    runDir: '/runs/earlier',
    traceSha256: 'a'.repeat(64),
    workspacePath: '/data/sales',
  };
  const lastModelTurn = trace.records.findLast((record) => record.type === 'model-turn');
  trace.records = trace.records.filter(
    (record) => record.type !== 'model-turn' || (rewritten && record === lastModelTurn),
  );
  return trace;
}

describe('madeBy', () => {
  it('an offline run: the offline analyst, its rounds, the rules that chose each cell', () => {
    const made = madeBy(buildRunView(makeSyntheticTrace({ rounds: 2, offline: true }).records));
    expect(made.subtitle).toEqual(['offline analyst', '3 rounds']);
    expect(made.noModelNote).toContain('choose the next cell');
  });

  it('a run with a model: no note', () => {
    const made = madeBy(buildRunView(makeSyntheticTrace({ rounds: 2 }).records));
    expect(made.subtitle[0]).toBe('model DeepAnalyze-8B');
    expect(made.noModelNote).toBeNull();
  });

  it("a re-run of a model's run names no model (its run-start names the earlier run's, never asked)", () => {
    const made = madeBy(buildRunView(rerunTrace(false).records));
    expect(made.subtitle).toContain('no model');
    expect(made.noModelNote).toMatch(/^This is a re-run of run run-earlier/);
    // --rewrite-answer leaves the model turn that rewrote the answer.
    const rewritten = madeBy(buildRunView(rerunTrace(false, true).records));
    expect(rewritten.subtitle).toContain('answer rewritten by a model');
    expect(rewritten.noModelNote).toBeNull();
  });

  it('a re-run: the run it re-ran and its cells, and nothing "chose" anything', async () => {
    const trace = rerunTrace();
    const made = madeBy(buildRunView(trace.records));
    expect(made.subtitle).toEqual(['re-run of run-earlier', 'no model', '2 recorded cells executed again']);
    expect(made.noModelNote).toMatch(/^This is a re-run of run run-earlier on new data/);
    expect(made.noModelNote).not.toContain('choose');
    const outDir = await mkdtemp(join(tmpdir(), 'datalyst-made-by-'));
    try {
      await renderReport(trace, { outDir, formats: ['html', 'md'] });
      for (const file of ['report.html', 'report.md']) {
        const text = await readFile(join(outDir, file), 'utf8');
        expect(text).toContain('re-run of run-earlier');
        expect(text).not.toContain('offline analyst ·');
        expect(text).not.toContain('choose the next cell');
      }
    } finally {
      await rm(outDir, { recursive: true, force: true });
    }
  });

  it("a re-run whose cell failed: backticked names in what happened are code, and the advice is a re-run's", async () => {
    const trace = rerunTrace();
    const end = trace.records.at(-1);
    if (end?.type !== 'run-end') throw new Error('the synthetic trace ends with run-end');
    end.termination = {
      reason: 'rerun-cell-failed',
      detail: 'The answer names `revenue`, which the new outputs never print.',
    };
    end.answer = null;
    const outDir = await mkdtemp(join(tmpdir(), 'datalyst-made-by-'));
    try {
      await renderReport(trace, { outDir, formats: ['html'] });
      const html = await readFile(join(outDir, 'report.html'), 'utf8');
      expect(html).toContain('The answer names <code>revenue</code>, which the new outputs never print.');
      expect(html).toContain('analyse them afresh with <code>datalyst analyze</code>.');
      expect(html).not.toContain('then run again.');
    } finally {
      await rm(outDir, { recursive: true, force: true });
    }
  });

  it('a re-run of a run that had no answer: not "no progress was being made", and the advice is to analyse afresh', async () => {
    const trace = rerunTrace();
    const end = trace.records.at(-1);
    if (end?.type !== 'run-end') throw new Error('the synthetic trace ends with run-end');
    end.termination = {
      reason: 'no-progress',
      detail: 'The recorded run has no answer to carry over (it ended cancelled).',
    };
    end.answer = null;
    const outDir = await mkdtemp(join(tmpdir(), 'datalyst-made-by-'));
    try {
      await renderReport(trace, { outDir, formats: ['html', 'md'] });
      const html = await readFile(join(outDir, 'report.html'), 'utf8');
      expect(html).toContain(
        'This re-run has no answer. The recorded run has no answer to carry over (it ended cancelled).',
      );
      expect(html).not.toContain('no progress was being made');
      expect(html).toContain('Analyse the new data afresh (<code>datalyst analyze</code>)');
      const markdown = await readFile(join(outDir, 'report.md'), 'utf8');
      // The command stays a code span in report.md (the brackets around it are escaped text).
      expect(markdown).toMatch(/\*\*What to do:\*\* Analyse the new data afresh \\\(`datalyst analyze`\\\)/);
    } finally {
      await rm(outDir, { recursive: true, force: true });
    }
  });
});
