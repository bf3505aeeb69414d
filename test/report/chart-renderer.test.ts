import { describe, expect, it } from 'vitest';
import { renderChart, sanitizeChartSvg } from '../../src/report/chart-renderer.ts';
import { pointSpec } from '../support/chart-specs.ts';

const pngMagic = [0x89, 0x50, 0x4e, 0x47];

describe('renderChart', () => {
  it('renders a vega-lite spec to SVG with text and to PNG', async () => {
    const chart = await renderChart(pointSpec(50));
    expect(chart.error).toBeNull();
    expect(chart.svg).toMatch(/^<svg[^>]+width="\d+"/);
    expect(chart.svg).toContain('>Points</text>');
    expect(chart.widthPx).toBeGreaterThan(100);
    expect(Array.from(chart.png?.slice(0, 4) ?? [])).toEqual(pngMagic);
    expect(chart.vegaLiteSpec).toMatchObject({ mark: 'point' });
  });

  it('caps a large inline dataset and says so', async () => {
    const chart = await renderChart(pointSpec(7000), { maxRows: 5000, png: false });
    expect(chart.notes.join(' ')).toContain(
      'The data has 7,000 rows; the chart shows the first 5,000 (the row limit)',
    );
    const values = (chart.vegaLiteSpec?.data as { values: unknown[] }).values;
    expect(values).toHaveLength(5000);
    expect(chart.png).toBeNull();
  });

  it('caps named datasets as Altair writes them', async () => {
    const spec = {
      ...pointSpec(0),
      data: { name: 'rows' },
      datasets: { rows: Array.from({ length: 30 }, (_, x) => ({ x, y: x })) },
    };
    const chart = await renderChart(spec, { maxRows: 10, png: false });
    expect(chart.error).toBeNull();
    expect(chart.notes.join(' ')).toContain('Dataset "rows" has 30 rows');
  });

  it('refuses remote data with the fix, rather than drawing an empty chart', async () => {
    for (const spec of [
      {
        data: { url: 'https://example.invalid/data.csv' },
        mark: 'point',
        encoding: { x: { field: 'a', type: 'quantitative' } },
      },
      // A layer's data, and plain vega's list of data sets.
      { layer: [{ data: { url: 'file:///etc/passwd' }, mark: 'point' }] },
      {
        $schema: 'https://vega.github.io/schema/vega/v5.json',
        data: [{ name: 't', url: 'https://example.invalid/t.json' }],
      },
      // A url computed by a signal loads as well.
      {
        $schema: 'https://vega.github.io/schema/vega/v5.json',
        data: [{ name: 't', url: { signal: "'https://example.invalid/' + 1" } }],
      },
    ]) {
      const chart = await renderChart(spec, { png: false });
      expect(chart.svg).toBeNull();
      expect(chart.error).toContain('loads its data from');
      expect(chart.error).toContain('Put the rows in the spec (data.values)');
    }
  });

  it('refuses to draw a summary (a sum, a count) from the first rows, and says how to draw it', async () => {
    // 20,000 rows sorted by group: the first 5,000 are all "A", so a cut chart would lose "B" and halve "A".
    const rows = Array.from({ length: 20_000 }, (_, index) => ({ group: index < 10_000 ? 'A' : 'B', n: 1 }));
    const summed = {
      data: { values: rows },
      mark: 'bar',
      encoding: {
        x: { field: 'group', type: 'nominal' },
        y: { aggregate: 'sum', field: 'n', type: 'quantitative' },
      },
    };
    const cut = await renderChart(summed, { maxRows: 5000, png: false });
    expect(cut.svg).toBeNull();
    expect(cut.error).toContain('summarizes its rows (aggregate)');
    expect(cut.error).toContain('20,000 rows, more than the 5,000');
    expect(cut.error).toContain('--max-rows');
    // Within the limit the same spec draws both groups, with their true sums.
    const whole = await renderChart(summed, { maxRows: 20_000, png: false });
    expect(whole.error).toBeNull();
    expect(whole.svg).toContain('>B</text>');
    expect(whole.svg).toContain('>10,000</text>');
    // A histogram (bin + count) is a summary too; a scatter of the first rows is not (it is said in a note).
    const histogram = await renderChart(
      {
        data: { values: rows.map((row, index) => ({ ...row, v: index })) },
        mark: 'bar',
        encoding: { x: { field: 'v', bin: true }, y: { aggregate: 'count' } },
      },
      { maxRows: 5000, png: false },
    );
    expect(histogram.error).toContain('summarizes its rows');
    const scatter = await renderChart(pointSpec(7000), { maxRows: 5000, png: false });
    expect(scatter.error).toBeNull();
  });

  it('refuses a stacked bar or a pie of the first rows: their heights and shares are sums', async () => {
    const rows = Array.from({ length: 8000 }, (_, index) => ({ group: index < 6000 ? 'A' : 'B', n: 1 }));
    const bar = await renderChart(
      {
        data: { values: rows },
        mark: 'bar',
        encoding: { x: { field: 'group', type: 'nominal' }, y: { field: 'n', type: 'quantitative' } },
      },
      { maxRows: 5000, png: false },
    );
    expect(bar.error).toContain('summarizes its rows (stack)');
    const pie = await renderChart(
      {
        data: { values: rows },
        mark: 'arc',
        encoding: { theta: { field: 'n', type: 'quantitative' }, color: { field: 'group', type: 'nominal' } },
      },
      { maxRows: 5000, png: false },
    );
    expect(pie.error).toContain('summarizes its rows');
  });

  it('reads a spec nested thousands deep as an error, never a throw', async () => {
    let nested: Record<string, unknown> = { mark: 'point' };
    for (let depth = 0; depth < 20_000; depth += 1) nested = { layer: [nested] };
    const chart = await renderChart(nested, { png: false });
    expect(chart.svg).toBeNull();
    expect(chart.error).not.toBeNull();
  });

  it('takes field types as vega-lite does: any case, and the one-letter forms', async () => {
    const chart = await renderChart(
      {
        data: { values: [{ a: 'x', b: 1 }] },
        mark: 'bar',
        encoding: { x: { field: 'a', type: 'N' }, y: { field: 'b', type: 'Quantitative' } },
      },
      { png: false },
    );
    expect(chart.error).toBeNull();
  });

  it('names a field type vega-lite does not know, instead of its "Invalid field type undefined"', async () => {
    const chart = await renderChart({
      data: { values: [{ a: 'x' }] },
      mark: 'bar',
      encoding: { x: { field: 'a', type: 'nominall' } },
    });
    expect(chart.svg).toBeNull();
    expect(chart.error).toContain('encoding.x.type is "nominall"');
    expect(chart.error).toContain('quantitative, temporal, ordinal, nominal or geojson');
  });

  it('returns an error for a field name vega-lite cannot parse, with the name escaped later', async () => {
    const chart = await renderChart({
      data: { values: [{ '<svg onload="x">': 1 }] },
      mark: 'bar',
      encoding: { x: { field: '<svg onload="x">', type: 'nominal' } },
    });
    expect(chart.svg).toBeNull();
    expect(chart.error).toContain('Access path');
  });

  it('returns an error instead of throwing for a spec that does not compile', async () => {
    const broken = await renderChart({ mark: { type: 'nonsense' }, encoding: {} });
    expect(broken.svg).toBeNull();
    expect(broken.error).toMatch(/does not compile|could not be drawn/);
    // An unknown mark crashes inside vega-lite: the error says where to look.
    expect((await renderChart({ mark: 'bogus', encoding: {} })).error).toMatch(
      /^The vega-lite spec does not compile: .+ \(vega-lite failed inside: check the mark, the channels and the field types against the vega-lite schema\)$/,
    );
    expect((await renderChart('not an object')).error).toContain('not a JSON object');
    expect((await renderChart([1, 2])).error).toContain('not a JSON object');
  });

  it('drops javascript: links of the href channel and escapes text from the data', async () => {
    // Quotes, dots or brackets in a field name would need vega-lite's escaping; this one needs none.
    const column = '<svg onload=alert(1)>';
    const chart = await renderChart(
      {
        data: { values: [{ [column]: 'a', v: 1, link: 'javascript:alert(1)' }] },
        mark: 'bar',
        encoding: {
          x: { field: column, type: 'nominal' },
          y: { field: 'v', type: 'quantitative' },
          href: { field: 'link' },
        },
      },
      { png: false },
    );
    expect(chart.error).toBeNull();
    expect(chart.svg).toContain('javascript:alert(1)'); // in an aria-label, as text
    expect(chart.svg).not.toMatch(/href="javascript:/);
    expect(chart.svg).not.toMatch(/<svg onload/);
  });

  it('renders a plain vega spec too', async () => {
    const chart = await renderChart(
      {
        $schema: 'https://vega.github.io/schema/vega/v5.json',
        width: 100,
        height: 50,
        marks: [
          {
            type: 'rect',
            encode: {
              enter: {
                x: { value: 0 },
                y: { value: 0 },
                width: { value: 50 },
                height: { value: 20 },
                fill: { value: 'steelblue' },
              },
            },
          },
        ],
      },
      { png: false },
    );
    expect(chart.error).toBeNull();
    expect(chart.svg).toContain('steelblue');
    expect(chart.vegaLiteSpec).toBeNull();
  });
});

describe('sanitizeChartSvg', () => {
  it('keeps in-document references and data images, drops every other link, handler, url() and script', () => {
    const svg = [
      '<svg><a href="javascript:alert(1)"><path d="M0,0" onclick="alert(1)"/></a>',
      '<a xlink:href="https://evil.example/"><rect fill="url(https://evil.example/p.svg#g)" clip-path="url(#clip1)"/></a>',
      '<image href="data:image/png;base64,AAAA"/><image xlink:href="file:///etc/passwd"/>',
      '<script>alert(1)</script><text aria-label="onload=x">keep me</text></svg>',
    ].join('');
    expect(sanitizeChartSvg(svg)).toBe(
      [
        '<svg><a><path d="M0,0"/></a>',
        '<a><rect fill="none" clip-path="url(#clip1)"/></a>',
        '<image href="data:image/png;base64,AAAA"/><image/>',
        '<text aria-label="onload=x">keep me</text></svg>',
      ].join(''),
    );
  });

  it('removes handlers and outside references hidden by quoting, case and unclosed scripts', () => {
    expect(
      sanitizeChartSvg(
        `<g aria-label="a > b" ONCLICK='x()' style="fill: url(http://e/x)"><title>t</title></g>`,
      ),
    ).toBe('<g aria-label="a > b" style="fill: none"><title>t</title></g>');
    expect(
      sanitizeChartSvg('<a href=javascript:x><text>y</text></a><style>g{fill:url(http://e/)}</style>'),
    ).toBe('<a><text>y</text></a><style>g{fill:none}</style>');
    expect(sanitizeChartSvg('<svg><text>ok</text><script>alert(1)')).toBe('<svg><text>ok</text>');
    expect(sanitizeChartSvg('<svg><SCRIPT type="a>b">alert(1)</SCRIPT></svg>')).toBe('<svg></svg>');
  });

  it('rewrites a tag whose handler, link or url() hides behind a newline, a tab or upper case (the quick check lets only plain tags through)', () => {
    expect(sanitizeChartSvg('<g\nonload="x()"><path\tOnMouseOver="y()" d="M0"/></g>')).toBe(
      '<g><path d="M0"/></g>',
    );
    expect(sanitizeChartSvg('<a\nXLINK:HREF="https://e/"><rect FILL="URL(http://e/p)"/></a>')).toBe(
      '<a><rect FILL="none"/></a>',
    );
    // Plain tags, as vega draws 5 000 points, are kept byte for byte.
    const plain =
      '<path transform="translate(1,2)" d="M2,0A2,2,0,1,1,-2,0" fill="#4c78a8" stroke-width="2"/>';
    expect(sanitizeChartSvg(`<g class="mark-symbol role-mark">${plain.repeat(3)}</g>`)).toBe(
      `<g class="mark-symbol role-mark">${plain.repeat(3)}</g>`,
    );
  });
});

describe('chart titles and labels round-trip exactly (sanitize structure, not the user text)', () => {
  it('keeps url(...) and href="..." in a title and an axis label, while scripts, handlers and links go', async () => {
    const title = 'Revenue url(https://example.com/x) and href="https://example.com" onclick=alert(1) <b>';
    const label = "Share of url('#clip') & href='x' <script>";
    const chart = await renderChart(
      {
        $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
        title,
        data: { values: [{ a: 'x', b: 1, link: 'javascript:alert(1)' }] },
        mark: 'bar',
        encoding: {
          x: { field: 'a', type: 'nominal', title: label },
          y: { field: 'b', type: 'quantitative' },
          href: { field: 'link', type: 'nominal' },
        },
      },
      { png: false },
    );
    expect(chart.error).toBeNull();
    const svg = chart.svg ?? '';
    const texts = [...svg.matchAll(/<text\b[^>]*>([\s\S]*?)<\/text>/g)].map((match) =>
      unescapeXml(match[1] ?? ''),
    );
    expect(texts).toContain(title);
    expect(texts).toContain(label);
    expect(svg).toContain('aria-label="Title text \'Revenue url(https://example.com/x) and href=&quot;');
    expect(svg).not.toMatch(/href\s*=\s*["']?javascript:/i);
    expect(svg).not.toMatch(/<script/i);
    // Attribute names only: no text node, no quoted value.
    const tags = svg.replace(/>[^<]*</g, '><').replace(/"[^"]*"|'[^']*'/g, '""');
    expect(tags).not.toMatch(/\son[a-z]+\s*=/i);
    expect(tags).toContain('<a>');
  });
});

function unescapeXml(text: string): string {
  return text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&amp;/g, '&');
}

describe('a note for an encoded field the data lacks', () => {
  const rows = [
    { month: '2024-01', units: 10 },
    { month: '2024-02', units: 14 },
  ];
  const missingNote = (notes: readonly string[]) =>
    notes.filter((note) => note.includes('which the data does not have'));

  it('is given for a single view whose field is not in its rows', async () => {
    const chart = await renderChart(
      {
        data: { values: rows },
        mark: 'line',
        encoding: { x: { field: 'month', type: 'temporal' }, y: { field: 'unit', type: 'quantitative' } },
      },
      { png: false },
    );
    expect(missingNote(chart.notes)).toEqual([
      'The encoding uses "unit", which the data does not have (its fields: "month", "units"): the chart has nothing to draw there.',
    ]);
  });

  it('is not given where a part of the spec can make the field, nor for a field only later rows hold', async () => {
    const layered = {
      data: { values: rows },
      encoding: { x: { field: 'month', type: 'temporal' }, y: { field: 'doubled', type: 'quantitative' } },
      layer: [{ mark: 'point', transform: [{ calculate: '2 * datum.units', as: 'doubled' }] }],
    };
    const transformed = {
      data: { values: rows },
      transform: [{ calculate: '2 * datum.units', as: 'doubled' }],
      mark: 'bar',
      encoding: { x: { field: 'month', type: 'ordinal' }, y: { field: 'doubled', type: 'quantitative' } },
    };
    const counted = {
      data: { values: rows },
      mark: 'bar',
      encoding: { x: { field: 'month', type: 'ordinal' }, y: { aggregate: 'count', type: 'quantitative' } },
    };
    const lateField = {
      data: {
        values: [
          ...Array.from({ length: 150 }, (_, index) => ({ month: `m${index}` })),
          { month: 'x', late: 3 },
        ],
      },
      mark: 'point',
      encoding: { x: { field: 'month', type: 'ordinal' }, y: { field: 'late', type: 'quantitative' } },
    };
    for (const spec of [layered, transformed, counted, lateField])
      expect(missingNote((await renderChart(spec, { png: false })).notes)).toEqual([]);
  });
});
