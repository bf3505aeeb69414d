import { readFileSync } from 'node:fs';
import * as vega from 'vega';
import { expressionInterpreter as upstream } from 'vega-interpreter';
import * as vegaLite from 'vega-lite';
import { describe, expect, it } from 'vitest';
import { expressionInterpreter as vendored } from '../../src/report/vega-expression-interpreter.js';

/**
 * src/report/vega-expression-interpreter.js is vega-interpreter 2.3.2 with its
 * evaluation context built once per expression. These specs exercise
 * operators, parameters, encoders, conditions, string and regexp functions,
 * time units, aggregates, layers and facets; both interpreters must draw the
 * same SVG, byte for byte.
 */
const rows = Array.from({ length: 240 }, (_, index) => ({
  day: new Date(Date.UTC(2024, 0, 1 + index)).toISOString().slice(0, 10),
  value: Math.round((100 + 40 * Math.sin(index / 9)) * 100) / 100,
  region: ['north', 'south', 'east', 'west'][index % 4],
  label: `Item ${index} <b>&</b>`,
}));

const vegaLiteSpecs: Record<string, Record<string, unknown>> = {
  'points, colour and size': {
    data: { values: rows },
    mark: { type: 'point', tooltip: true },
    encoding: {
      x: { field: 'day', type: 'temporal' },
      y: { field: 'value', type: 'quantitative' },
      color: { field: 'region', type: 'nominal' },
      size: { field: 'value', type: 'quantitative' },
    },
  },
  'line by month with a time unit': {
    data: { values: rows },
    mark: 'line',
    encoding: {
      x: { timeUnit: 'yearmonth', field: 'day', type: 'temporal' },
      y: { aggregate: 'mean', field: 'value', type: 'quantitative' },
      color: { field: 'region', type: 'nominal' },
    },
  },
  'bars from calculate and filter expressions': {
    data: { values: rows },
    transform: [
      { filter: "datum.value > 80 && test(/^(north|east)$/, datum.region) || datum.region === 'west'" },
      { calculate: 'upper(substring(datum.region, 0, 1)) + "-" + format(datum.value, ".1f")', as: 'tag' },
      { calculate: 'datum.value % 7 < 3 ? "low" : "high"', as: 'band' },
      { calculate: 'pow(2, 3) + abs(-4) + (isValid(datum.x) ? 1 : 0)', as: 'constant' },
    ],
    mark: 'bar',
    encoding: {
      x: { field: 'band', type: 'nominal', sort: '-y' },
      y: { aggregate: 'sum', field: 'value', type: 'quantitative' },
      color: { condition: { test: "datum['band'] === 'low'", value: '#c44' }, value: '#48c' },
    },
  },
  'text marks with formats': {
    data: { values: rows.slice(0, 30) },
    mark: { type: 'text', dx: 3, align: 'left' },
    encoding: {
      y: { field: 'label', type: 'nominal' },
      text: { field: 'value', type: 'quantitative', format: ',.2f' },
    },
  },
  'layers with a rule and a selection': {
    data: { values: rows },
    layer: [
      {
        params: [{ name: 'pick', select: { type: 'point', fields: ['region'] }, bind: 'legend' }],
        mark: 'circle',
        encoding: {
          x: { field: 'day', type: 'temporal' },
          y: { field: 'value', type: 'quantitative' },
          color: { field: 'region', type: 'nominal' },
          opacity: { condition: { param: 'pick', value: 1 }, value: 0.2 },
        },
      },
      { mark: 'rule', encoding: { y: { aggregate: 'mean', field: 'value', type: 'quantitative' } } },
    ],
  },
  'facets with a fold': {
    data: { values: rows.slice(0, 60).map((row) => ({ ...row, other: row.value / 2 })) },
    transform: [{ fold: ['value', 'other'] }],
    mark: 'area',
    encoding: {
      x: { field: 'day', type: 'temporal' },
      y: { field: 'value', type: 'quantitative', stack: true },
      color: { field: 'key', type: 'nominal' },
      column: { field: 'region', type: 'nominal' },
    },
  },
};

const plainVegaSpec = {
  $schema: 'https://vega.github.io/schema/vega/v5.json',
  width: 200,
  height: 100,
  signals: [
    { name: 'threshold', value: 0.5 },
    { name: 'doubled', update: 'threshold * 2 + length([1, 2, 3])' },
  ],
  data: [
    {
      name: 'numbers',
      values: Array.from({ length: 40 }, (_, index) => ({ x: index, y: (index * 37) % 11 })),
      transform: [{ type: 'formula', expr: 'datum.y / 10 > threshold ? "over" : "under"', as: 'side' }],
    },
  ],
  scales: [
    { name: 'x', type: 'linear', domain: { data: 'numbers', field: 'x' }, range: 'width' },
    { name: 'y', type: 'linear', domain: { data: 'numbers', field: 'y' }, range: 'height' },
  ],
  marks: [
    {
      type: 'symbol',
      from: { data: 'numbers' },
      encode: {
        update: {
          x: { scale: 'x', field: 'x' },
          y: { scale: 'y', field: 'y' },
          fill: { signal: "datum.side === 'over' ? 'red' : 'blue'" },
          size: { signal: 'doubled * 10' },
        },
      },
    },
  ],
};

async function draw(spec: vega.Spec, expr: typeof upstream): Promise<string> {
  const view = new vega.View(vega.parse(spec, undefined, { ast: true }), {
    renderer: 'none',
    expr,
    logLevel: vega.None,
  });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

describe('the vendored vega-interpreter', () => {
  it('is based on the installed vega-interpreter release', () => {
    const installed = JSON.parse(
      readFileSync(new URL('../../node_modules/vega-interpreter/package.json', import.meta.url), 'utf8'),
    ) as { version: string };
    // A new release may fix a security check: compare it with the vendored copy and port the change.
    expect(installed.version).toBe('2.3.2');
  });

  for (const [name, spec] of Object.entries(vegaLiteSpecs)) {
    it(`draws what upstream draws: ${name}`, async () => {
      const compiled = vegaLite.compile(spec as unknown as vegaLite.TopLevelSpec).spec;
      const ours = await draw(compiled, vendored);
      expect(ours.length).toBeGreaterThan(1000);
      expect(ours).toBe(await draw(compiled, upstream));
    });
  }

  it('draws what upstream draws: a plain vega spec with signals and formulas', async () => {
    const spec = plainVegaSpec as unknown as vega.Spec;
    const ours = await draw(spec, vendored);
    expect(ours).toContain('fill="red"');
    expect(ours).toBe(await draw(spec, upstream));
  });

  it('refuses what upstream refuses: reaching Function through a constructor', async () => {
    const globals = globalThis as { datalystPwned?: boolean };
    const spec = vegaLite.compile({
      data: { values: [{ a: 1 }] },
      transform: [
        { calculate: "datum.a.constructor.constructor('globalThis.datalystPwned = true')()", as: 'b' },
      ],
      mark: 'point',
      encoding: { x: { field: 'b', type: 'quantitative' } },
    }).spec;
    const outcomes = await Promise.all(
      [vendored, upstream].map((expr) =>
        draw(spec, expr).then(
          () => 'drawn',
          (error: unknown) => (error instanceof Error ? error.message : String(error)),
        ),
      ),
    );
    expect(globals.datalystPwned).toBeUndefined();
    expect(outcomes[0]).toBe(outcomes[1]);
  });
});
