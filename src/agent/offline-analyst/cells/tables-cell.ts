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
 * asked about by name, and the findings say so.
 */
export function tablesCell(named: readonly NamedTable[], nameable: readonly string[]): string {
  const namedLines = named.map(
    (entry) => `    (${pythonString(entry.file)}, ${pythonOptionalString(entry.table)}),`,
  );
  return String.raw`${tablesCellHeader}
named = [
${namedLines.join('\n')}
]
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
for file, table in named:
    label = file if not table else f'{file} [{table}]'
    keys = [key for key in tables if (key.split(' [')[0] == file if table is None else key == label) and key not in seen]
    if not keys and not any(key.split(' [')[0] == file for key in seen):
        why = problems.get(label) or problems.get(file)
        findings.append(f'{md(label, 60)} is not loaded in this conversation' + (f' (its reader failed: {md(why, 160)})' if why else '') + '.')
    for key in keys:
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
show_findings('tables', findings, studied=sorted(seen))`;
}
