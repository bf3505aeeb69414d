import { Resvg } from '@resvg/resvg-js';
import { describe, expect, it } from 'vitest';
import { renderChart } from '../../src/report/chart-renderer.ts';
import { systemFontFiles } from '../../src/report/system-fonts.ts';

// What the renderer handed resvg before the fonts were listed once per process.
const searchedFonts = {
  background: 'white',
  fitTo: { mode: 'zoom', value: 1 },
  font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans', sansSerifFamily: 'DejaVu Sans' },
  logLevel: 'off',
} as const;

const textHeavySpec = {
  $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
  title: { text: 'Ünïcödé revenue — Q1 → Q2', subtitle: 'serif and monospace too', font: 'serif' },
  data: {
    values: ['North', 'South', 'Été', 'Öst', 'Zürich', 'Łódź'].map((region, index) => ({
      region,
      revenue: 100 + index * 37,
    })),
  },
  mark: 'bar',
  encoding: {
    x: { field: 'region', type: 'nominal', axis: { labelFont: 'monospace', labelAngle: -30 } },
    y: { field: 'revenue', type: 'quantitative', title: 'Revenue (€)' },
  },
};

describe('chart PNGs with the system fonts listed once per process', () => {
  it('lists font files that exist on this machine (Linux), sorted', () => {
    const files = systemFontFiles();
    if (process.platform !== 'linux') {
      expect(files).toBeNull();
      return;
    }
    expect(files?.length).toBeGreaterThan(0);
    expect(files).toEqual([...(files ?? [])].sort());
    expect(files?.every((file) => /\.(ttf|ttc|otf|otc)$/i.test(file))).toBe(true);
  });

  it('draws the same pixels as resvg searching the system fonts itself (sans-serif, serif, monospace, accents)', async () => {
    const chart = await renderChart(textHeavySpec, { scopeIds: false });
    expect(chart.error).toBeNull();
    expect(chart.svg).toMatch(/font-family="serif"/);
    expect(chart.svg).toMatch(/font-family="monospace"/);
    const searched = new Resvg(chart.svg ?? '', searchedFonts).render().asPng();
    expect(chart.png).not.toBeNull();
    expect(Buffer.from(chart.png ?? new Uint8Array()).equals(searched)).toBe(true);
  });
});
