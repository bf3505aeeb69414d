import { formatBytes, h } from './dom.ts';
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
]);
const columnFields = new Set(['name', 'dtype', 'kind', 'missing', 'unique', 'samples', 'min', 'max']);

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
  const caption = `${name === '' ? 'Table' : name} — ${num(table.rows).toLocaleString('en-US')} rows, ${columns.length} columns${table.columnsTruncated === true ? ' profiled (more left out)' : ''}`;
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
    h('th', { scope: 'col' }, 'Sample values'),
    hasExtras ? h('th', { scope: 'col' }, 'More') : null,
  );
  const body = columns.map((column, index) => {
    const min = shortText(column.min);
    const max = shortText(column.max);
    return h(
      'tr',
      {},
      h('th', { scope: 'row' }, str(column.name)),
      h('td', {}, `${str(column.kind)} (${str(column.dtype)})`),
      h('td', {}, shortText(column.missing)),
      h('td', {}, shortText(column.unique)),
      h('td', {}, min === '' && max === '' ? '' : `${min} – ${max}`),
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
  const label = `First ${cells.length} ${cells.length === 1 ? 'row' : 'rows'}${name === '' ? '' : ` of ${name}`}`;
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
