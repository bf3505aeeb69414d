import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderReport } from '../../src/report/index.ts';
import type { TraceRecord } from '../../src/trace/schema.ts';
import { makeSyntheticTrace } from '../fixtures/traces/synthetic-trace.ts';

/**
 * A re-run's report says what it re-ran (the earlier run's id, folder name
 * and trace hash) in both reports' provenance, and its stale / not-grounded
 * marks stand out in the HTML as styled text, not as markdown brackets.
 */

let root = '';
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'datalyst-rerun-provenance-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const traceSha256 = 'ab'.repeat(32);
const answer = [
  'Revenue was 4242.5 \\[stale\\] in the North.',
  '',
  'Orders: 77777 \\[not grounded\\]; a <b>tag</b> stays text.',
  '',
  'The mean fell by 0.1 \\[sign changed\\].',
].join('\n');

function asRerun(records: readonly TraceRecord[]): TraceRecord[] {
  return records.map((record) =>
    record.type === 'run-start'
      ? {
          ...record,
          rerunOf: {
            runId: 'run-earlier-1',
            runDir: '/work/runs/20260101-120000-sales',
            traceSha256,
            workspacePath: '/work/data/sales',
          },
        }
      : record,
  );
}

async function render(records: TraceRecord[], name: string): Promise<{ html: string; markdown: string }> {
  const outDir = join(root, name);
  await renderReport(records, { outDir, formats: ['md', 'html'], now: new Date('2025-03-02T00:00:00Z') });
  return {
    html: await readFile(join(outDir, 'report.html'), 'utf8'),
    markdown: await readFile(join(outDir, 'report.md'), 'utf8'),
  };
}

describe("a re-run's report", () => {
  const { records } = makeSyntheticTrace({ rounds: 1, charts: 0, figures: 0, answer });

  it('names the earlier run (id, folder name, trace SHA-256) in the provenance of both reports', async () => {
    const { html, markdown } = await render(asRerun(records), 'rerun');
    const provenance = html.slice(html.indexOf('<section id="provenance">'));
    expect(provenance).toContain('<dt>Re-run of</dt>');
    expect(provenance).toMatch(
      new RegExp(`<dd>run run-earlier-1 \\(folder 20260101-120000-sales\\), trace SHA-256 ${traceSha256};`),
    );
    const line = markdown.split('\n').find((text) => text.startsWith('- **Re-run of:**')) ?? '';
    expect(line).toContain('run run-earlier-1');
    expect(line).toContain('20260101-120000-sales');
    expect(line).toContain(`\`${traceSha256}\``);
    // It belongs to the provenance section.
    expect(markdown.indexOf(line)).toBeGreaterThan(markdown.indexOf('## Provenance'));
  });

  it('shows its stale and not-grounded marks as styled text in the HTML, and the markdown keeps them escaped', async () => {
    const { html, markdown } = await render(asRerun(records), 'rerun-marks');
    expect(html).toContain('<mark class="rerun-mark rerun-stale">[stale]</mark>');
    expect(html).toContain('<mark class="rerun-mark rerun-not-grounded">[not grounded]</mark>');
    expect(html).toContain('<mark class="rerun-mark rerun-sign-changed">[sign changed]</mark>');
    expect(html).toMatch(/\.rerun-sign-changed \{[^}]*background/);
    expect(html).toContain('&lt;b&gt;tag&lt;/b&gt;');
    // Styled by the report's stylesheet (a class), not an inline style: the CSP allows no inline styles.
    expect(html).toMatch(/\.rerun-stale \{[^}]*background/);
    expect(html).not.toMatch(/<mark[^>]*style=/);
    expect(markdown).toContain('4242.5 \\[stale\\]');
    expect(markdown).toContain('77777 \\[not grounded\\]');
  });

  it('never links a stale number as verified, even when a new output happens to print that value', async () => {
    const printed = makeSyntheticTrace({ rounds: 1, charts: 0, figures: 0 }).expected.verified[0] ?? '';
    expect(printed).not.toBe('');
    const staleAnswer = `Fresh ${printed}; carried over ${printed} \\[stale\\].`;
    const { records: withStale } = makeSyntheticTrace({
      rounds: 1,
      charts: 0,
      figures: 0,
      answer: staleAnswer,
    });
    const { html } = await render(asRerun(withStale), 'rerun-stale-printed');
    const answerHtml = html.slice(
      html.indexOf('class="answer'),
      html.indexOf('</section>', html.indexOf('class="answer')),
    );
    expect(answerHtml.match(/class="num num-verified"/g)).toHaveLength(1);
    expect(answerHtml).toMatch(
      new RegExp(
        `<span class="num num-unverified"[^>]*>${printed.replace('.', '\\.')}<sup>\\?</sup></span> <mark class="rerun-mark rerun-stale">`,
      ),
    );
  });

  it('is left alone for a run that is not a re-run: no row, no styled marks', async () => {
    const { html, markdown } = await render(records, 'not-rerun');
    expect(html).not.toContain('Re-run of');
    expect(html).not.toContain('rerun-mark rerun-stale');
    expect(html).toContain('[stale]');
    expect(markdown).not.toContain('**Re-run of:**');
  });
});
