import type { DataEntry } from '../first-message.ts';

/**
 * The focused mode of a deep analysis's sub-analyst: it studies only the
 * tables of its sub-question. A table is named as the workspace names it: a
 * file (`enrolled.csv`: every table of it) or `file#table` (one sheet or
 * SQLite table). The other files stay in the sandbox; the analyst just never
 * loads them, so its cells, findings and charts are about its tables alone.
 * When no name matches a listed file, the whole workspace is studied (a
 * sub-question about tables the profile did not list must still get an answer).
 */
export function focusEntries(entries: readonly DataEntry[], focusTables: readonly string[]): DataEntry[] {
  if (focusTables.length === 0) return [...entries];
  const wanted = new Set(focusTables);
  const focused: DataEntry[] = [];
  for (const entry of entries) {
    if (wanted.has(entry.name)) {
      focused.push(entry);
      continue;
    }
    const tables = (entry.tables ?? []).filter((table) => wanted.has(`${entry.name}#${table.name}`));
    if (tables.length === 0) continue;
    // Only the named tables: the others of the file are not "more tables" to read.
    const { more_tables: _unlisted, ...rest } = entry;
    focused.push({ ...rest, tables });
  }
  return focused.length === 0 ? [...entries] : focused;
}
