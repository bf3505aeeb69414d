import { stageHeader } from '../stages.ts';

/**
 * Relational workspaces (like DeepAnalyze's student-loan data: a `person`
 * table and many tables listing the `name`s that have some property) say
 * little table by table. When one column is unique in one table and its
 * values recur in two or more others, join them into one row per entity:
 * membership tables become yes/no columns, one-to-one tables add their
 * columns, one-to-many tables add a count.
 */
export function relationsCell(): string {
  return String.raw`${stageHeader('relations')}
candidates = {}
for key in tables:
    if key in duplicates:
        continue
    for column in tables[key].columns:
        if not re.fullmatch(r'column_\d+', column) and kind_of(tables[key][column]) in ('id', 'category', 'text'):
            candidates.setdefault(column, []).append(key)
link = None
for column, keys in candidates.items():
    bases = sorted((k for k in keys if tables[k][column].dropna().is_unique), key=lambda k: (-tables[k][column].nunique(), tables[k].shape[1]))
    if not bases:
        continue
    known = set(tables[bases[0]][column].dropna().astype(str))
    linked = [k for k in keys if k != bases[0] and tables[k][column].dropna().astype(str).isin(known).mean() >= 0.5]
    if len(linked) >= 2 and (link is None or len(linked) > len(link[2])):
        link = (column, bases[0], linked)

stems_used = {}
def table_stem(key):
    """A joined table's name in the columns it adds: its file's (enrolled.xlsx [Sheet1] is 'enrolled', not 'Sheet1'),
    with the sheet or table when the file holds several, and the extension when another file has the same stem."""
    file, _, inner = key.partition(' [')
    name = file.rsplit('/', 1)[-1]
    stem, _, extension = name.rpartition('.') if '.' in name else (name, '', '')
    if inner and sum(other.partition(' [')[0] == file for other in tables) > 1:
        stem = f'{stem}_{inner.rstrip("]")}'
    stem = re.sub(r'\W+', '_', stem).strip('_') or 'table'
    if stems_used.setdefault(stem, key) != key:
        stem = re.sub(r'\W+', '_', f'{stem}_{extension}').strip('_')
    return stem

joined, findings = set(), []
if link is None:
    findings.append('No column links three or more tables, so the tables are studied one by one.')
else:
    column, base, linked = link
    combined = tables[base][[column]].drop_duplicates().reset_index(drop=True)
    ids = combined[column].astype(str)
    joined.add(base)
    for key in linked:
        other, stem = tables[key], table_stem(key)
        values = other[column].astype(str)
        extra = [c for c in other.columns if c != column][:4]
        if not extra:  # a list of members: one yes/no column
            combined[stem] = ids.isin(set(values))
            joined.add(key)
        elif values.is_unique:  # one row per entity: its columns
            part = other[extra].set_axis(values).add_prefix(stem + '.')
            combined = pd.concat([combined, part.reindex(ids).reset_index(drop=True)], axis=1)
            joined.add(key)
        else:  # several rows per entity: how many
            combined[stem + '.rows'] = ids.map(values.value_counts()).fillna(0).astype(int)
    combined = clean_names(combined)
    combined_key = f'joined on {column}'
    tables[combined_key] = combined
    print(f'{combined_key}: {len(combined)} rows × {combined.shape[1]} columns, from {base} and ' + ', '.join(linked))
    print(combined.head(5).to_string())
    findings.append(f'{len(linked) + 1} tables share the key {md(column)}; {md(base, 60)} lists {len(combined)} of them, and the others were joined onto it as {md(combined_key, 60)} ({len(combined)} rows × {combined.shape[1]} columns).')
    findings.append('Columns added: ' + ', '.join(md(c) for c in combined.columns[1:13]) + '.')
show_findings('relations', findings, joined=sorted(joined), **choose_focus(skip=joined))`;
}
