import { h } from './dom.ts';
import { arr, num, rec, str } from './events.ts';
import { formatBytes } from './dom.ts';

/** The workspace profile of a `profile-end` event: per file its tables (sheets), columns with kinds, samples and notes. */
export function profileView(profile: unknown): HTMLElement {
  const section = h('section', { class: 'profile', 'aria-label': 'File profiles' });
  for (const fileValue of arr(rec(profile).files)) {
    const file = rec(fileValue);
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
    for (const tableValue of arr(file.tables)) {
      const table = rec(tableValue);
      const columns = arr(table.columns).map(rec);
      const caption = `${str(table.name)} — ${num(table.rows).toLocaleString('en-US')} rows, ${columns.length} columns`;
      const sampleCount = Math.min(3, Math.max(0, ...columns.map((column) => arr(column.samples).length)));
      const head = h(
        'tr',
        {},
        h('th', { scope: 'col' }, 'Column'),
        h('th', { scope: 'col' }, 'Type'),
        h('th', { scope: 'col' }, 'Missing'),
        h('th', { scope: 'col' }, `Sample values`),
      );
      const body = columns.map((column) =>
        h(
          'tr',
          {},
          h('th', { scope: 'row' }, str(column.name)),
          h('td', {}, `${str(column.kind)} (${str(column.dtype)})`),
          h('td', {}, String(num(column.missing))),
          h('td', {}, arr(column.samples).slice(0, sampleCount).map(str).join(' · ')),
        ),
      );
      details.append(
        h(
          'div',
          { class: 'table-scroll', tabindex: '0', role: 'region', 'aria-label': caption },
          h('table', {}, h('caption', {}, caption), h('thead', {}, head), h('tbody', {}, ...body)),
        ),
      );
    }
    section.append(details);
  }
  return section;
}
