import { cp, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChartPool, notebookSchema, renderReport, renderRunFolder } from '../../src/report/index.ts';
import { makeSyntheticTrace, withSavedImage } from '../fixtures/traces/synthetic-trace.ts';
import { sequenceSpec } from '../support/chart-specs.ts';

let root = '';
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'datalyst-report-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('renderReport', () => {
  const trace = makeSyntheticTrace({ rounds: 6, charts: 2, figures: 2 });
  let outDir = '';
  let html = '';
  beforeAll(async () => {
    outDir = join(root, 'synthetic');
    const rendered = await renderReport(trace, { outDir, now: new Date('2025-03-02T00:00:00Z') });
    expect(rendered.charts).toEqual({ rendered: 2, failed: 0 });
    html = await readFile(join(outDir, 'report.html'), 'utf8');
  });

  it('writes the four formats and the Markdown assets', async () => {
    expect((await readdir(outDir)).sort()).toEqual([
      'analysis.ipynb',
      'assets',
      'report.html',
      'report.md',
      'trace.json',
    ]);
    expect((await readdir(join(outDir, 'assets'))).sort()).toEqual([
      'E1-chart-1.png',
      'E2-chart-1.png',
      'E3-figure-1.png',
      'E3-table-1.csv',
      'E4-figure-1.png',
      'E6-table-1.csv',
    ]);
    const traceJson = JSON.parse(await readFile(join(outDir, 'trace.json'), 'utf8')) as {
      records: unknown[];
    };
    expect(traceJson.records).toEqual(JSON.parse(JSON.stringify(trace.records)));
  });

  it('puts the answer first, then figures, data, process and provenance', () => {
    const order = [
      'id="instruction"',
      'id="answer"',
      'id="figures"',
      'id="data"',
      'id="process"',
      'id="provenance"',
    ].map((marker) => html.indexOf(marker));
    expect(order.every((position) => position > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });

  it('is self-contained: a strict CSP, no script, nothing loaded from elsewhere', () => {
    expect(html).toContain(
      `http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:;`,
    );
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/<link\b/i);
    expect(html).not.toMatch(/\ssrc="(?!data:)/);
    expect(html).not.toMatch(/@import|url\((?!#)/);
  });

  it('links verified numbers to their output and flags unverified ones, with a count', () => {
    expect(html).toContain(
      '<strong>3 of 5</strong> numbers in the answer were found in the execution outputs',
    );
    for (const number of trace.expected.verified)
      expect(html).toMatch(
        new RegExp(
          `class="num num-verified" href="#output-E1"[^>]*>${number.replace('.', '\\.')}<sup>E1</sup>`,
        ),
      );
    for (const number of trace.expected.unverified)
      expect(html).toContain(
        `<span class="num num-unverified" title="Unverified: no execution output printed this number">${number}<sup>?</sup></span>`,
      );
    expect(html).toContain('id="output-E1"');
  });

  it('shows every chart once as SVG and reuses it in the process; figures as PNG', () => {
    expect(html.match(/<figure class="chart" id="E\d-chart-1"><svg id="E\d-chart-1-svg"/g)).toHaveLength(2);
    // Reused twice each: in the process, and in the view that enlarges it.
    expect(html.match(/<use href="#E\d-chart-1-svg"\/>/g)).toHaveLength(4);
    expect(html.match(/<image id="E\d-figure-1-image" href="data:image\/png;base64,/g)).toHaveLength(2);
  });

  it('shows provenance: model, endpoint without credentials, tokens, limits, hashes', () => {
    expect(html).toContain('<dd>DeepAnalyze-8B</dd>');
    expect(html).toContain('http://localhost:8000/v1');
    expect(html).not.toContain('secret');
    expect(html).not.toContain('key=abc');
    for (const file of trace.records[0]?.type === 'run-start' ? trace.records[0].workspace.files : []) {
      expect(html).toContain(file.sha256);
      expect(html).toContain(`${file.sizeBytes.toLocaleString('en-US')} bytes`);
    }
    expect(html).toMatch(/vega-lite 6\.\d+\.\d+/);
    expect(html).toContain('highlight.js 11.');
  });

  it('shows the start, end and render times as a person reads them, in UTC, the exact ISO time in <time datetime> (it showed 2025-03-01T09:00:00.000Z)', async () => {
    const end = trace.records.findLast((record) => record.type === 'run-end');
    if (end?.type !== 'run-end') throw new Error('the synthetic trace ends with run-end');
    const ended = new Date(end.endedAt);
    const endedText = `1 March 2025, ${String(ended.getUTCHours()).padStart(2, '0')}:${String(ended.getUTCMinutes()).padStart(2, '0')} UTC`;
    const subtitle = html.slice(
      html.indexOf('<p class="subtitle">'),
      html.indexOf('</p>', html.indexOf('<p class="subtitle">')),
    );
    expect(subtitle).toContain(
      'started <time datetime="2025-03-01T09:00:00.000Z">1 March 2025, 09:00 UTC</time>',
    );
    expect(html).toContain(
      '<dt>Started</dt><dd><time datetime="2025-03-01T09:00:00.000Z">1 March 2025, 09:00 UTC</time></dd>',
    );
    expect(html).toContain(`<dt>Ended</dt><dd><time datetime="${end.endedAt}">${endedText}</time></dd>`);
    expect(html).toContain('at <time datetime="2025-03-02T00:00:00.000Z">2 March 2025, 00:00 UTC</time>.');
    const markdown = await readFile(join(outDir, 'report.md'), 'utf8');
    expect(markdown).toContain(' · started 1 March 2025, 09:00 UTC · ');
    expect(markdown).toContain(
      `started 1 March 2025, 09:00 UTC, ended ${endedText}; report rendered 2 March 2025, 00:00 UTC`,
    );
    // No raw ISO time is left for a person to read, in either report (the trace keeps them).
    expect(html.replaceAll(/datetime="[^"]*"/g, '')).not.toMatch(/\d{4}-\d\d-\d\dT\d\d:\d\d/);
    expect(markdown).not.toMatch(/\d{4}-\d\d-\d\dT\d\d:\d\d/);
  });

  it('highlights code and prints for paper', () => {
    expect(html).toContain('<code class="hljs language-python"><span class="hljs-keyword">import</span>');
    expect(html).toContain('@media print');
  });

  it('writes Markdown that links its assets and tables its numbers', async () => {
    const markdown = await readFile(join(outDir, 'report.md'), 'utf8');
    expect(markdown).toContain('![Chart 1 of output E1](assets/E1-chart-1.png)');
    expect(markdown).toContain(
      '**Grounding: 3 of 5 numbers in the answer were found in the execution outputs; 2 unverified.**',
    );
    expect(markdown).toContain('| 8,912.5 | **unverified** |  |  |');
    expect(markdown).toContain('<a id="output-E1"></a>**Output E1**');
    expect(markdown).toContain('## Provenance');
  });

  it('writes a valid nbformat 4.5 notebook with outputs in order', async () => {
    const notebook = notebookSchema.parse(JSON.parse(await readFile(join(outDir, 'analysis.ipynb'), 'utf8')));
    expect(notebook.nbformat_minor).toBe(5);
    const codeCells = notebook.cells.filter((cell) => cell.cell_type === 'code');
    expect(codeCells.map((cell) => cell.id)).toEqual(['datalyst-setup', 'E1', 'E2', 'E3', 'E4', 'E5', 'E6']);
    expect(codeCells.map((cell) => cell.execution_count)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    const first = codeCells[1];
    expect(first?.outputs[0]).toMatchObject({ output_type: 'stream', name: 'stdout' });
    const chartOutput = first?.outputs[1];
    expect(chartOutput?.output_type === 'display_data' && Object.keys(chartOutput.data).sort()).toEqual([
      'application/vnd.vegalite.v5+json',
      'image/png',
      'text/plain',
    ]);
    const figureOutput = codeCells[3]?.outputs[1];
    expect(figureOutput?.output_type === 'display_data' && typeof figureOutput.data['image/png']).toBe(
      'string',
    );
    expect([notebook.cells.at(-1)?.source].flat().join('')).toContain('## Answer');
  });
});

describe('report banners', () => {
  it('says plainly that no language model was used when the offline analyst ran', async () => {
    const outDir = join(root, 'offline');
    await renderReport(makeSyntheticTrace({ offline: true, rounds: 1, charts: 0, figures: 0 }), {
      outDir,
      formats: ['html', 'md'],
    });
    const html = await readFile(join(outDir, 'report.html'), 'utf8');
    const banner = html.indexOf('<strong>No language model was used.</strong>');
    expect(banner).toBeGreaterThan(0);
    expect(banner).toBeLessThan(html.indexOf('id="answer"'));
    expect(await readFile(join(outDir, 'report.md'), 'utf8')).toContain('> **No language model was used.**');
  });

  it('says prominently that a run was cancelled and had no answer', async () => {
    const outDir = join(root, 'cancelled');
    await renderReport(makeSyntheticTrace({ outcome: 'cancelled', rounds: 2, charts: 0, figures: 0 }), {
      outDir,
      formats: ['html'],
    });
    const html = await readFile(join(outDir, 'report.html'), 'utf8');
    expect(html).toContain(
      '<div class="banner banner-outcome banner-cancelled" role="alert"><p><strong>What happened.</strong> This run was cancelled before it finished. Ctrl-C. There is no answer.</p>',
    );
    expect(html).toContain('<h2>No answer</h2>');
  });

  it('says that a run ended without an answer at the round limit', async () => {
    const outDir = join(root, 'max-rounds');
    await renderReport(makeSyntheticTrace({ outcome: 'max-rounds', rounds: 2, charts: 0, figures: 0 }), {
      outDir,
      formats: ['html'],
    });
    expect(await readFile(join(outDir, 'report.html'), 'utf8')).toContain(
      'This run ended without an answer (the round limit was reached). Stopped after 2 rounds.',
    );
  });
});

describe('renderRunFolder', () => {
  it('re-renders a run folder from a partial trace.jsonl and embeds image artifacts', async () => {
    const runDir = join(root, 'run-folder');
    const trace = makeSyntheticTrace({ outcome: 'incomplete', rounds: 2, charts: 1, figures: 1 });
    const { records, png } = withSavedImage(trace);
    await cp(
      join(import.meta.dirname, '../fixtures/traces/student-loan/SOURCE.md'),
      join(runDir, 'artifacts', 'notes.md'),
      { recursive: true },
    );
    await cp(
      join(import.meta.dirname, '../fixtures/traces/student-loan/SOURCE.md'),
      join(runDir, 'artifacts', 'plots', 'placeholder'),
      { recursive: true },
    );
    await writeFile(join(runDir, 'artifacts', 'plots', 'revenue.png'), png);
    await writeFile(
      join(runDir, 'trace.jsonl'),
      `${records.map((record) => JSON.stringify(record)).join('\n')}\n{"type":"step","rou`,
    );
    const rendered = await renderRunFolder(runDir);
    expect(rendered.files.map((file) => file.slice(runDir.length + 1)).sort()).toEqual([
      'analysis.ipynb',
      'assets/E1-chart-1.png',
      'assets/E2-figure-1.png',
      'report.html',
      'report.md',
      'trace.json',
    ]);
    const html = await readFile(join(runDir, 'report.html'), 'utf8');
    expect(html).toContain('<p class="verdict verdict-incomplete">Incomplete</p>');
    expect(html).toContain(
      `<img src="data:image/png;base64,${png.toString('base64')}" alt="plots/revenue.png"`,
    );
    expect(await readFile(join(runDir, 'report.md'), 'utf8')).toContain(
      '![plots/revenue.png](artifacts/plots/revenue.png)',
    );
  });

  it('fails with TraceError when the folder has no trace', async () => {
    await expect(renderRunFolder(join(root, 'nothing-here'))).rejects.toMatchObject({
      code: 'TRACE_INVALID',
    });
  });
});

describe('a chart spec that asks vega for too much', () => {
  it('becomes an error box; the other charts and every format are still written', async () => {
    const trace = makeSyntheticTrace({ rounds: 6, charts: 2, figures: 1 });
    const execution = trace.records.find((record) => record.type === 'execution');
    const chart = execution?.type === 'execution' ? execution.result.charts[0] : undefined;
    if (!chart || !('spec' in chart)) throw new Error('the synthetic trace has no chart in its first cell');
    chart.spec = sequenceSpec(100_000_000);
    const pool = new ChartPool({ size: 1, memoryMb: 192 });
    const outDir = join(root, 'hostile-chart');
    try {
      const rendered = await renderReport(trace, { outDir, chartPool: pool });
      expect(rendered.charts).toEqual({ rendered: 1, failed: 1 });
      const written = rendered.files.map((file) => file.slice(outDir.length + 1));
      expect(written).toEqual(
        expect.arrayContaining([
          'report.html',
          'report.md',
          'analysis.ipynb',
          'trace.json',
          'assets/E2-chart-1.png',
        ]),
      );
      expect(written).not.toContain('assets/E1-chart-1.png');
      const html = await readFile(join(outDir, 'report.html'), 'utf8');
      expect(html).toContain('The chart needed more than 192 MB of memory to draw and was stopped.');
    } finally {
      await pool.close();
    }
  });
});
