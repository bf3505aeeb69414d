import { counted, formatBytes, h } from './dom.ts';
import { arr, num, rec, str, type EventRecord } from './events.ts';

/** Fields drawn in their own place; any other field a newer server sends is shown as "name: value". */
const fileFields = new Set(['path', 'sizeBytes', 'format', 'tables', 'error', 'notes']);
const tableFields = new Set([
  'name',
  'rows',
  'columns',
  'columnsTruncated',
  'read',
  'loadCode',
  'sampleRows',
  'statsRows',
  'duplicateRows',
  'correlations',
]);
const columnFields = new Set([
  'name',
  'dtype',
  'kind',
  'missing',
  'unique',
  'samples',
  'min',
  'max',
  'mean',
  'std',
  'skewness',
  'histogram',
  'topValues',
]);

const SVG = 'http://www.w3.org/2000/svg';

/**
 * A statistic as the report's data section shows it (`formatStatistic` in
 * src/report/data-profile-view.ts): whole from 1,000 up, else 4 significant digits.
 */
const statText = (value: number): string =>
  (Math.abs(value) >= 1000 ? Math.round(value) : Number(value.toPrecision(4))).toLocaleString('en-US', {
    maximumFractionDigits: 4,
  });

/** A plain decimal written with thousands separators, digits kept (as the report's `groupMeasureDigits` in src/report/data-profile-view.ts). */
function groupDigits(text: string): string {
  const plain = /^(-?)(\d+)(\.\d+)?$/.exec(text);
  if (plain === null) return text;
  const [, sign = '', whole = '', fraction = ''] = plain;
  return `${sign}${whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}${fraction}`;
}

/** A value as short text: scalars as they are, lists joined, records as `key: value` pairs; nested deeper is left out. */
function shortText(value: unknown, depth = 0): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value.toLocaleString('en-US') : '';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (depth > 1) return '';
  if (Array.isArray(value))
    return value
      .slice(0, 10)
      .map((item) => shortText(item, depth + 1))
      .filter((text) => text !== '')
      .join(', ');
  if (typeof value === 'object')
    return Object.entries(value as Record<string, unknown>)
      .map(([key, item]) => [key, shortText(item, depth + 1)] as const)
      .filter(([, text]) => text !== '')
      .map(([key, text]) => `${key}: ${text}`)
      .join(', ');
  return '';
}

/** The fields of `record` not in `known`, as "name: value" text (empty when there are none). */
function otherFields(record: EventRecord, known: ReadonlySet<string>): string {
  return Object.entries(record)
    .filter(([key]) => !known.has(key))
    .map(([key, value]) => [key, shortText(value)] as const)
    .filter(([, text]) => text !== '')
    .map(([key, text]) => `${key}: ${text}`)
    .join(' · ');
}

/** How a table was read (encoding, delimiter, sheet, header row…): only what was set. */
function readText(read: EventRecord): string {
  const labels: Record<string, string> = {
    encoding: 'encoding',
    delimiter: 'delimiter',
    sheet: 'sheet',
    table: 'table',
    headerRow: 'header row',
    skipRows: 'lines skipped above the header',
    decimal: 'decimal mark',
    thousands: 'thousands separator',
    naValues: 'read as missing',
  };
  return Object.entries(read)
    .filter(([key, value]) => !(key === 'skipRows' && value === 0))
    .map(([key, value]) => {
      // The header's row is 0-based in the profile; people count lines from 1.
      if (key === 'headerRow' && typeof value === 'number') return `the header on line ${value + 1}`;
      const text = shortText(value);
      if (text === '') return '';
      return `${labels[key] ?? key} ${typeof value === 'string' ? JSON.stringify(text) : text}`;
    })
    .filter((text) => text !== '')
    .join(', ');
}

/**
 * A workspace profile (`GET …/profile`, or a turn's `profile-end`): per file
 * its tables (sheets), columns with their kinds, missing counts, ranges and
 * sample values, and the notes on how it was read. Read field by field, so a
 * field a newer server adds shows as "name: value" instead of breaking it.
 * Every value is text.
 */
export function profileView(profile: unknown): HTMLElement {
  const workspace = rec(profile);
  const section = h('section', { class: 'profile', 'aria-label': 'File profiles' });
  const files = arr(workspace.files).map(rec);
  if (workspace.truncated === true) {
    const total = num(workspace.totalFiles);
    section.append(
      h(
        'p',
        { class: 'notice' },
        total > files.length
          ? `${files.length} of ${total} files are profiled here (the profile is kept short).`
          : 'Some tables or columns are left out to keep the profile short.',
      ),
    );
  }
  for (const file of files) {
    const details = h('details', { class: 'file-profile', open: true });
    details.append(
      h(
        'summary',
        {},
        h('strong', {}, str(file.path)),
        ` · ${str(file.format)} · ${formatBytes(num(file.sizeBytes))}`,
      ),
    );
    const error = str(file.error);
    if (error !== '') details.append(h('p', { class: 'error' }, error));
    const notes = arr(file.notes)
      .map(str)
      .filter((note) => note !== '');
    if (notes.length > 0)
      details.append(h('ul', { class: 'notes' }, ...notes.map((note) => h('li', {}, note))));
    const moreFile = otherFields(file, fileFields);
    if (moreFile !== '') details.append(h('p', { class: 'profile-more' }, moreFile));
    for (const table of arr(file.tables).map(rec)) details.append(tableView(table));
    section.append(details);
  }
  return section;
}

function tableView(table: EventRecord): HTMLElement {
  const columns = arr(table.columns).map(rec);
  const name = str(table.name);
  const caption = `${name === '' ? 'Table' : name} — ${counted(num(table.rows), 'row')}, ${counted(columns.length, 'column')}${table.columnsTruncated === true ? ' profiled (more left out)' : ''}`;
  const summaries = columns.map(columnSummary);
  const hasSummaries = summaries.some((summary) => summary !== null);
  const extras = columns.map((column) => otherFields(column, columnFields));
  const hasExtras = extras.some((text) => text !== '');
  const head = h(
    'tr',
    {},
    h('th', { scope: 'col' }, 'Column'),
    h('th', { scope: 'col' }, 'Type'),
    h('th', { scope: 'col' }, 'Missing'),
    h('th', { scope: 'col' }, 'Distinct'),
    h('th', { scope: 'col' }, 'Range'),
    hasSummaries ? h('th', { scope: 'col' }, 'Summary') : null,
    h('th', { scope: 'col' }, 'Sample values'),
    hasExtras ? h('th', { scope: 'col' }, 'More') : null,
  );
  const body = columns.map((column, index) => {
    // A measure's range is grouped like its mean beside it ("17,531 – 29,735"); ids and codes stay as written.
    const asMeasure = (text: string) => (str(column.kind) === 'number' ? groupDigits(text) : text);
    const min = asMeasure(shortText(column.min));
    const max = asMeasure(shortText(column.max));
    return h(
      'tr',
      {},
      h('th', { scope: 'row' }, str(column.name)),
      h('td', {}, `${str(column.kind)} (${str(column.dtype)})`),
      h('td', {}, shortText(column.missing)),
      h('td', {}, shortText(column.unique)),
      h('td', {}, min === '' && max === '' ? '' : `${min} – ${max}`),
      hasSummaries ? h('td', { class: 'column-summary' }, summaries[index]) : null,
      h(
        'td',
        {},
        arr(column.samples)
          .slice(0, 5)
          .map((sample) => shortText(sample))
          .join(' · '),
      ),
      hasExtras ? h('td', {}, extras[index] ?? '') : null,
    );
  });
  const wrapper = h(
    'div',
    { class: 'table-profile' },
    h(
      'div',
      { class: 'table-scroll', tabindex: '0', role: 'region', 'aria-label': caption },
      h('table', {}, h('caption', {}, caption), h('thead', {}, head), h('tbody', {}, ...body)),
    ),
  );
  const sample = firstRowsView(columns, arr(table.sampleRows), name);
  if (sample !== null) wrapper.append(sample);
  const facts = tableFacts(table, columns.length);
  if (facts !== '') wrapper.append(h('p', { class: 'profile-facts' }, facts));
  const read = readText(rec(table.read));
  if (read !== '') wrapper.append(h('p', { class: 'profile-read' }, `Read with ${read}.`));
  const moreTable = otherFields(table, tableFields);
  if (moreTable !== '') wrapper.append(h('p', { class: 'profile-more' }, moreTable));
  return wrapper;
}

/** The table's first rows as the profile sent them (each cell clipped text, null when missing); null when there are none. */
function firstRowsView(columns: EventRecord[], rows: unknown[], name: string): HTMLElement | null {
  const cells = rows.slice(0, 10).map((row) => arr(row).slice(0, columns.length));
  if (cells.length === 0 || columns.length === 0) return null;
  const label = `First ${counted(cells.length, 'row')}${name === '' ? '' : ` of ${name}`}`;
  return h(
    'div',
    { class: 'table-scroll first-rows', tabindex: '0', role: 'region', 'aria-label': label },
    h(
      'table',
      {},
      h('caption', {}, label),
      h('thead', {}, h('tr', {}, ...columns.map((column) => h('th', { scope: 'col' }, str(column.name))))),
      h(
        'tbody',
        {},
        ...cells.map((row) =>
          h('tr', {}, ...columns.map((_, position) => h('td', {}, shortText(row[position])))),
        ),
      ),
    ),
  );
}

/**
 * What the profile's statistics say of a column: mean, spread and skew with a
 * histogram of a measure, or the most frequent values of a category; null
 * when it has none of them (an older server's profile).
 */
function columnSummary(column: EventRecord): HTMLElement | null {
  const stats = (
    [
      ['mean', column.mean],
      ['std', column.std],
      ['skew', column.skewness],
    ] as const
  ).flatMap(([label, value]) =>
    typeof value === 'number' && Number.isFinite(value) ? [`${label} ${statText(value)}`] : [],
  );
  const top = arr(column.topValues)
    .map(rec)
    .filter((entry) => typeof entry.value === 'string');
  const histogram = histogramView(rec(column.histogram), str(column.name));
  if (stats.length === 0 && top.length === 0 && histogram === null) return null;
  // Values seen once each (an id) have no most frequent one.
  const eachOnce = top.length > 0 && top.every((entry) => num(entry.count) <= 1);
  const shown = eachOnce
    ? []
    : top.slice(0, 3).map((entry) => `${str(entry.value)} (${num(entry.count).toLocaleString('en-US')})`);
  return h(
    'div',
    {},
    stats.length > 0 ? h('div', {}, stats.join(' · ')) : null,
    eachOnce ? h('div', {}, 'each value once') : null,
    shown.length > 0
      ? h('div', {}, `most frequent: ${shown.join(' · ')}${top.length > 3 ? ' …' : ''}`)
      : null,
    histogram,
  );
}

/**
 * A column's histogram as a small SVG of bars (sizes as attributes: the
 * page's CSP allows no inline style), described for screen readers; null
 * without counts.
 */
function histogramView(histogram: EventRecord, name: string): SVGSVGElement | null {
  const counts = arr(histogram.counts).map(num).slice(0, 64);
  const highest = Math.max(0, ...counts);
  if (counts.length === 0 || highest === 0) return null;
  const width = 96;
  const height = 24;
  const bar = width / counts.length;
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('class', 'histogram');
  svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
  svg.setAttribute('width', String(width));
  svg.setAttribute('height', String(height));
  svg.setAttribute('role', 'img');
  const range =
    typeof histogram.low === 'number' && typeof histogram.high === 'number'
      ? ` from ${statText(histogram.low)} to ${statText(histogram.high)}`
      : '';
  svg.setAttribute(
    'aria-label',
    `Distribution of ${name}: ${counts.length} equal bins${range}, rows per bin ${counts.map((count) => count.toLocaleString('en-US')).join(', ')}`,
  );
  counts.forEach((count, index) => {
    if (count === 0) return;
    // At least a pixel, so that a bin with a few rows is seen beside a tall one.
    const barHeight = Math.max(1, (count / highest) * height);
    const rect = document.createElementNS(SVG, 'rect');
    rect.setAttribute('x', (index * bar).toFixed(2));
    rect.setAttribute('y', (height - barHeight).toFixed(2));
    rect.setAttribute('width', Math.max(0.5, bar - 1).toFixed(2));
    rect.setAttribute('height', barHeight.toFixed(2));
    svg.append(rect);
  });
  return svg;
}

/** The table's statistics in a sentence: the rows they come from, duplicate rows, strong correlations. */
function tableFacts(table: EventRecord, columnCount: number): string {
  const facts: string[] = [];
  const rows = num(table.rows);
  if (typeof table.statsRows === 'number' && table.statsRows < rows)
    facts.push(
      `Statistics from the first ${table.statsRows.toLocaleString('en-US')} of ${rows.toLocaleString('en-US')} rows`,
    );
  if (typeof table.duplicateRows === 'number' && table.duplicateRows > 0)
    facts.push(counted(table.duplicateRows, 'duplicate row'));
  const correlations = arr(table.correlations)
    .map(rec)
    .filter((pair) => typeof pair.r === 'number' && str(pair.a) !== '' && str(pair.b) !== '');
  if (correlations.length > 0 && columnCount > 1)
    facts.push(
      `correlated (|r| ≥ 0.5): ${correlations
        .slice(0, 5)
        .map((pair) => `${str(pair.a)} and ${str(pair.b)} (r = ${num(pair.r).toFixed(2)})`)
        .join(', ')}${correlations.length > 5 ? ' …' : ''}`,
    );
  if (facts.length === 0) return '';
  const sentence = facts.join('; ');
  return `${sentence.charAt(0).toUpperCase()}${sentence.slice(1)}.`;
}
