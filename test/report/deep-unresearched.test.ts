import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeepRecord } from '../../src/deep/index.ts';
import { renderDeepRunFolder } from '../../src/report/index.ts';
import { buildRecordedDeepRun } from '../deep/support/recorded-deep-run.ts';

/**
 * What broke: a run cancelled while its budget had already left questions out said of every
 * unresearched question "The run's budget of sub-analyses was spent before them", although the
 * cancel stopped some. Each reason is now said for its own questions.
 */

let root = '';
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'datalyst-deep-unresearched-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** The recorded run (6 questions, 4 sub-analyses) with S4 skipped by a cancel: questions 5 and 6 never had one. */
function cancelledAtS4(skipReason: boolean) {
  return (plain: DeepRecord): DeepRecord => ({
    ...plain,
    termination: { reason: 'cancelled', detail: 'The run was cancelled.' },
    subAnalyses: plain.subAnalyses.map((sub) =>
      sub.id === 'S4'
        ? {
            ...sub,
            outcome: 'skipped',
            detail: 'Not run: the run was cancelled.',
            runDir: null,
            startedAt: null,
            endedAt: null,
            answer: null,
            termination: null,
            evidenceIds: [],
            ...(skipReason ? { skipReason: 'cancelled' as const } : {}),
          }
        : sub,
    ),
    evidence: plain.evidence.filter((item) => item.subAnalysisId !== 'S4'),
    outline: null,
    sections: [],
  });
}

async function render(name: string, edit: (plain: DeepRecord) => DeepRecord) {
  const outDir = join(root, name);
  await buildRecordedDeepRun(outDir, edit);
  await renderDeepRunFolder(outDir, { formats: ['html', 'md'], now: new Date(0) });
  const html = await readFile(join(outDir, 'report.html'), 'utf8');
  const markdown = await readFile(join(outDir, 'report.md'), 'utf8');
  const band = /<div class="banner banner-unresearched"[^>]*>(.*?)<\/div>/.exec(html)?.[1] ?? '';
  const quote =
    markdown.split('\n').find((line) => line.startsWith('> **') && line.includes('not researched')) ?? '';
  return { band, quote };
}

describe('questions left unresearched for different reasons', () => {
  it('says the cancel stopped question 4 and the budget left out 5 and 6, with the flag for those only', async () => {
    const { band, quote } = await render('mixed', cancelledAtS4(true));
    expect(band).toContain('3 of the brief&#39;s 6 questions were not researched (questions 4, 5 and 6');
    expect(band).toContain('Question 4: the run was cancelled before it started.');
    expect(band).toContain(
      'Questions 5 and 6: the run&#39;s budget of sub-analyses was spent before them; to research them, run the analysis again with <code>--sub-analyses 6</code>.',
    );
    expect(band).not.toMatch(/Question 4: the run&#39;s budget/);
    expect(quote).toContain('Question 4: the run was cancelled before it started.');
    expect(quote).toContain("Questions 5 and 6: the run's budget of sub-analyses was spent before them");
    expect(quote).toContain('`--sub-analyses 6`.');
  });

  it('reads the cause from the run’s ending in a record older than skipReason', async () => {
    const { band } = await render('older', cancelledAtS4(false));
    expect(band).toContain('Question 4: the run was cancelled before it started.');
    expect(band).toContain('Questions 5 and 6: the run&#39;s budget of sub-analyses was spent');
  });

  it('names a deadline as the deadline', async () => {
    const { band } = await render('deadline', (plain) => {
      const edited = cancelledAtS4(true)(plain);
      return {
        ...edited,
        termination: { reason: 'deadline', detail: 'The run reached its deadline of 8 s.' },
        subAnalyses: edited.subAnalyses.map((sub) =>
          sub.id === 'S4' ? { ...sub, skipReason: 'deadline' as const } : sub,
        ),
      };
    });
    expect(band).toContain('Question 4: the run&#39;s deadline came before it started.');
  });
});
