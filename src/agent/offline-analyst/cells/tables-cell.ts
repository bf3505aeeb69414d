import { pythonOptionalString, pythonString, pythonStringList } from '../python-literal.ts';

/** A table a follow-up names: one sheet or SQLite table, or (`table` null) every table of the file. */
export interface NamedTable {
  file: string;
  table: string | null;
}

/** The first line of the cell. It is no step of the plan, so `stageOfCode` reads no stage from it. */
export const tablesCellHeader = '# offline-analyst follow-up: the tables the question names';

/**
 * A follow-up that names tables: each as the kernel of this conversation
 * holds it (rows and columns after tidying, which may differ from the
 * workspace profile: a title row dropped, `Unnamed: 1` renamed `column_2`,
 * an empty column left out), and which of its columns a later question can
 * name. `nameable`: the normalized column names a question's words can match
 * (`column-match.ts`); a kernel column whose name is not among them cannot be
 * asked about by name, and the findings say so. `named` is `'all'` for a
 * question about the data as a whole ("Describe the data"): every table the
 * kernel holds, at most `maxAllTables` in full (a table that repeats another
 * in one line), and the files whose reader failed.
 */
export function tablesCell(
  named: readonly NamedTable[] | 'all',
  nameable: readonly string[],
  maxAllTables = 12,
): string {
  const namedList =
    named === 'all'
      ? 'None  # every table the kernel holds'
      : `[\n${named.map((entry) => `    (${pythonString(entry.file)}, ${pythonOptionalString(entry.table)}),`).join('\n')}\n]`;
  return String.raw`${tablesCellHeader}
named = ${namedList}
nameable = set(${pythonStringList(nameable)})

def norm(text):
    return re.sub(r'[\W_]+', '', str(text).lower())
def rows_or_columns(count, noun):
    return f'{count} {noun}' + ('' if count == 1 else 's')
def names_text(names, limit=40):
    shown = ', '.join(md(name, 80) for name in names[:limit])
    return shown + (f' and {len(names) - limit} more' if len(names) > limit else '')

sampled_tables = globals().get('sampled', {})  # a kernel replayed from an older thread may not have it
findings, seen = [], set()
def describe(key):
    seen.add(key)
    frame = tables[key]
    print(f'{key}: {len(frame)} rows × {frame.shape[1]} columns')
    print('Columns: ' + ', '.join(str(column) for column in frame.columns))
    shape = f'{md(key, 60)}: {rows_or_columns(len(frame), "row")} × {rows_or_columns(frame.shape[1], "column")}, as loaded in this conversation'
    if key in sampled_tables:
        shape += f' (a random sample of its {sampled_tables[key][1]} rows)'
    if key in duplicates:
        shape += f'; it holds the same data as {md(duplicates[key], 60)}, which the breakdowns use'
    findings.append(shape + '.')
    usable = [column for column in frame.columns if norm(column) in nameable]
    placed = [column for column in frame.columns if column not in usable and re.fullmatch(r'column_\d+', str(column))]
    other = [column for column in frame.columns if column not in usable and column not in placed]
    if usable:
        findings.append(f'{md(key, 60)}: a follow-up can name {names_text(usable)}.')
    if placed:
        one = len(placed) == 1
        findings.append(f'{md(key, 60)}: {names_text(placed, 8)} {"has" if one else "have"} no name in the file (called by '
                        f'{"its" if one else "their"} place), so a question cannot name {"it" if one else "them"}.')
    if other:
        findings.append(f'{md(key, 60)}: a question cannot name {names_text(other, 8)}: the offline analyst does not match '
                        f'{"that name" if len(other) == 1 else "these names"} to the words of a question.')

if named is None:
    # Every table: a copy of another (the same sheet saved as CSV and XLSX) in one line, after the others.
    own = [key for key in tables if key not in duplicates]
    for key in own[:${maxAllTables}]:
        describe(key)
    if len(own) > ${maxAllTables}:
        findings.append(f'{len(own) - ${maxAllTables}} more tables are loaded ({names_text(own[${maxAllTables}:], 8)}); a follow-up that names one describes it.')
    copies = [key for key in tables if key in duplicates]
    if copies:
        repeats = ', '.join(f'{md(key, 60)} repeats {md(duplicates[key], 60)}' for key in copies[:8])
        findings.append(f'Copies of other tables, not described again: {repeats}' + (f' and {len(copies) - 8} more' if len(copies) > 8 else '') + '.')
    seen.update(copies)
    for label, why in problems.items():
        if label not in tables:
            findings.append(f'{md(label, 60)} is not loaded in this conversation (its reader failed: {md(why, 160)}).')
    if not tables:
        findings.append('No table is loaded in this conversation.')
else:
    for file, table in named:
        label = file if not table else f'{file} [{table}]'
        keys = [key for key in tables if (key.split(' [')[0] == file if table is None else key == label) and key not in seen]
        if not keys and not any(key.split(' [')[0] == file for key in seen):
            why = problems.get(label) or problems.get(file)
            findings.append(f'{md(label, 60)} is not loaded in this conversation' + (f' (its reader failed: {md(why, 160)})' if why else '') + '.')
        for key in keys:
            describe(key)
show_findings('tables', findings, studied=sorted(seen))`;
}
