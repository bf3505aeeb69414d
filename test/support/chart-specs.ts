/** vega-lite specs the report tests draw. */

/** A scatter of `rows` inline points. */
export function pointSpec(rows: number, title = 'Points'): Record<string, unknown> {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title,
    data: { values: Array.from({ length: rows }, (_, index) => ({ x: index, y: index % 17 })) },
    mark: 'point',
    encoding: { x: { field: 'x', type: 'quantitative' }, y: { field: 'y', type: 'quantitative' } },
  };
}

/** No inline rows at all, yet vega generates `rows` of them: the 5 000-row cap cannot see it. */
export function sequenceSpec(rows: number): Record<string, unknown> {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    data: { sequence: { start: 0, stop: rows, as: 'x' } },
    mark: 'point',
    encoding: { x: { field: 'x', type: 'quantitative' } },
  };
}
