/**
 * What a chart spec asks for that a chart here cannot draw honestly. Each
 * check turns a chart that would come out empty or wrong, with only a note
 * beside it, into an error that names the cause and the fix.
 */

/** The field types vega-lite knows (`encoding.*.type`), in any case, and its one-letter forms. */
const fieldTypes = new Set(['quantitative', 'temporal', 'ordinal', 'nominal', 'geojson', 'q', 't', 'o', 'n']);

/**
 * Vega transforms whose output depends on every row (a sum, a count, a
 * density, a fitted line…). Drawn from the first rows only, such a chart
 * shows wrong figures, not just fewer points. vega-lite compiles its
 * `aggregate`, `bin` + count, `boxplot`, `errorbar`, `density`, `regression`…
 * to these; a stacked bar or area (vega-lite stacks bars by default) and a
 * pie add rows up too.
 */
const summarizingTransforms = new Set([
  'aggregate',
  'stack',
  'pie',
  'joinaggregate',
  'window',
  'kde',
  'density',
  'regression',
  'loess',
  'quantile',
  'pivot',
  'countpattern',
]);

/**
 * The URLs a spec loads data from (`data.url`, in any view, a lookup's
 * `from.data`, or plain vega's `data: [{url}]`). Charts here are drawn only
 * from the rows in the spec: the loader refuses every load, so such a chart
 * would come out empty.
 */
export function remoteDataUrls(spec: unknown): string[] {
  const urls: string[] = [];
  visitSpec(spec, (node, key) => {
    // Whatever its type: a signal or an object would load as well (the loader refuses it, and the chart comes out empty).
    if (key === 'data' && node.url !== undefined)
      urls.push(typeof node.url === 'string' ? node.url : JSON.stringify(node.url));
  });
  return urls;
}

/** Encodings whose `type` vega-lite does not know, as `encoding.x.type is "nominall"`; vega-lite itself says `Invalid field type "undefined"`. */
export function unknownFieldTypes(spec: unknown): string[] {
  const found: string[] = [];
  visitSpec(spec, (node, key) => {
    if (key !== 'encoding') return;
    for (const [channel, definition] of Object.entries(node))
      for (const part of Array.isArray(definition) ? definition : [definition])
        if (isRecord(part) && typeof part.type === 'string' && !fieldTypes.has(part.type.toLowerCase()))
          found.push(`encoding.${channel}.type is "${part.type}"`);
  });
  return found;
}

/** The kinds of summarizing transform a compiled vega spec runs on its data (`aggregate`, `density`…), each once. */
export function summarizingTransformsOf(vegaSpec: unknown): string[] {
  const kinds = new Set<string>();
  visitSpec(vegaSpec, (node, key) => {
    // Under `transform` only: `quantile` is a scale's type too.
    if (key === 'transform' && typeof node.type === 'string' && summarizingTransforms.has(node.type))
      kinds.add(node.type);
  });
  return [...kinds];
}

/**
 * Calls `visit` with every object of a spec and the key it sits under (an
 * array's items under the array's key), except data rows (`values`,
 * `datasets`): a chart's 5 000 rows are not walked for every chart.
 */
function visitSpec(spec: unknown, visit: (node: Record<string, unknown>, key: string | null) => void): void {
  // A stack, not recursion: a spec nested thousands deep must not overflow the call stack.
  const pending: Array<[unknown, string | null]> = [[spec, null]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [node, key] = next;
    if (Array.isArray(node)) {
      for (const item of node) pending.push([item, key]);
      continue;
    }
    if (!isRecord(node)) continue;
    visit(node, key);
    for (const [childKey, child] of Object.entries(node))
      if (childKey !== 'values' && childKey !== 'datasets' && typeof child === 'object')
        pending.push([child, childKey]);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
