import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderReport } from '../../src/report/index.ts';
import { groupMeasureDigits } from '../../src/report/data-profile-view.ts';
import { markdownPlainText } from '../../src/report/safe-markdown.ts';
import { makeSyntheticTrace } from '../fixtures/traces/synthetic-trace.ts';

describe("a round's summary line in the folded process", () => {
  it('reads markdown as a renderer does: file names keep their underscores, markup goes', () => {
    expect(markdownPlainText('Load `sales_plan.xlsx` and **orders_2024.csv**, _then_ check.')).toBe(
      'Load sales_plan.xlsx and orders_2024.csv, then check.',
    );
    expect(markdownPlainText('## Plan\n\n- read spanish_chars.csv\n- weird_head_padding.csv\n> quoted')).toBe(
      'Plan read spanish_chars.csv weird_head_padding.csv quoted',
    );
  });

  it('shows the first words of the step with its file names whole, as text', async () => {
    const trace = makeSyntheticTrace({ rounds: 1, charts: 0, figures: 0 });
    const records = trace.records.map((record) =>
      record.type === 'step' && record.kind === 'analyze'
        ? { ...record, text: 'Load the tables of sales_plan.xlsx and spanish_chars.csv <b>now</b>.' }
        : record,
    );
    const outDir = await mkdtemp(join(tmpdir(), 'datalyst-round-summary-'));
    try {
      await renderReport({ ...trace, records }, { outDir, formats: ['html'] });
      const html = await readFile(join(outDir, 'report.html'), 'utf8');
      expect(html).toContain(
        '<span class="gist">Load the tables of sales_plan.xlsx and spanish_chars.csv &lt;b&gt;now&lt;/b&gt;.</span>',
      );
    } finally {
      await rm(outDir, { recursive: true, force: true });
    }
  });
});

describe("a measure's min and max in the data section", () => {
  it('get thousands separators as text, digits kept; anything else stays as written', () => {
    expect(groupMeasureDigits('17531')).toBe('17,531');
    expect(groupMeasureDigits('-1234567.25')).toBe('-1,234,567.25');
    expect(groupMeasureDigits('12')).toBe('12');
    // Past float precision, still exact.
    expect(groupMeasureDigits('98765432109876543210')).toBe('98,765,432,109,876,543,210');
    expect(groupMeasureDigits('2024-01-01')).toBe('2024-01-01');
    expect(groupMeasureDigits('1e6')).toBe('1e6');
    expect(groupMeasureDigits(null)).toBe('');
  });
});

describe('"Figures and tables" with nothing to show', () => {
  // report.html said "The run produced no other figures, charts or tables" when there were none at all,
  // report.md "no figures or charts": one wording, "other" only when key charts stand above.
  async function rendered(
    options: Parameters<typeof makeSyntheticTrace>[0],
  ): Promise<{ html: string; markdown: string }> {
    const outDir = await mkdtemp(join(tmpdir(), 'datalyst-empty-gallery-'));
    try {
      await renderReport(makeSyntheticTrace(options), { outDir, formats: ['html', 'md'] });
      return {
        html: await readFile(join(outDir, 'report.html'), 'utf8'),
        markdown: await readFile(join(outDir, 'report.md'), 'utf8'),
      };
    } finally {
      await rm(outDir, { recursive: true, force: true });
    }
  }

  it('says the same in both formats when the run made none at all', async () => {
    const { html, markdown } = await rendered({ rounds: 1, charts: 0, figures: 0 });
    expect(html).toContain('<p class="note">The run produced no figures, charts or tables.</p>');
    expect(markdown).toContain('*The run produced no figures, charts or tables.*');
    expect(html).not.toContain('no other');
  });

  it('leaves tables out when the run printed some (they are in the process)', async () => {
    const { html, markdown } = await rendered({ rounds: 3, charts: 0, figures: 0 });
    expect(html).toContain('<p class="note">The run produced no figures or charts.</p>');
    expect(markdown).toContain('*The run produced no figures or charts.*');
  });

  it('says "other" only when key charts were shown above', async () => {
    const { html } = await rendered({ rounds: 1, charts: 1, figures: 0 });
    expect(html).toContain('<h2>Key charts</h2>');
    expect(html).toContain(
      '<p class="note">The run produced no figures or charts other than the key charts above, and no tables.</p>',
    );
  });
});
