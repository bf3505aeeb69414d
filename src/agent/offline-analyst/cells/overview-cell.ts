import { stageHeader } from '../stages.ts';

/** Types, missing values, ranges, top categories and date spans of the tables studied in depth. */
export function overviewCell(): string {
  return String.raw`${stageHeader('overview')}
findings = []
for key in focus:
    frame, k = tables[key], kinds(tables[key])
    print(f'\n=== {key}: {shape_of(frame, names=0)} ===')
    in_file = file_missing.get(key, frame.isna().sum())  # missing in the file, not values set aside by a conversion
    profile = pd.DataFrame({'kind': pd.Series(k), 'missing': in_file, 'distinct': frame.nunique()})
    print(profile.head(30).to_string())
    counts = pd.Series(k).value_counts()
    kinds_text = ', '.join(f'{n} {kind}' for kind, n in counts.items()) + (' column' if frame.shape[1] == 1 else ' columns')
    if key not in shape_listed:  # the load step (or the tolerant reader) listed most tables with their shape
        findings.append(f'{md(key, 60)}: {shape_of(frame, names=0)}.')
    constant = [c for c in frame.columns if k[c] == 'constant']
    if constant:
        full = [c for c in constant if frame[c].notna().all()]
        partial = [c for c in constant if c not in full]
        for group, where in ((full, 'in every row'), (partial, 'where present')):
            if group:
                verb = 'holds' if len(group) == 1 else 'hold'
                findings.append(f'{md(key, 60)}: ' + ', '.join(md(c) for c in group[:5]) + f' {verb} a single value {where}.')
    missing = in_file.sort_values(ascending=False, kind='stable')
    missing = missing[missing > 0]
    # One line a table: its kinds of columns and its missing values (its shape is in the load step's list).
    if missing.empty:
        findings.append(f'{md(key, 60)} ({kinds_text}): no missing values.')
    else:
        findings.append(f'{md(key, 60)} ({kinds_text}): {count_of(int(missing.sum()), "missing value")} in {count_of(len(missing), "column")}; '
                        f'{md(missing.index[0])} misses {int(missing.iloc[0])} of {len(frame)} ({pct(missing.iloc[0], len(frame))}).')
    numbers = [c for c in frame.columns if k[c] == 'number']
    if numbers:
        stats = frame[numbers[:10]].describe().T[['mean', '50%', 'min', 'max']].rename(columns={'50%': 'median'})
        print('\n' + stats.map(fmt).to_string())
        for column in numbers[:1]:
            values = frame[column]
            # Named with its table: in a deep report "The data" gathers the claims of several sub-analyses.
            findings.append(f'{md(column)} ({md(key, 60)}) ranges from {fmt(values.min())} to {fmt(values.max())} (median {fmt(values.median())}, mean {fmt(values.mean())}).')
    for column in [c for c in frame.columns if k[c] in ('category', 'boolean')][:1]:
        top = frame[column].value_counts()
        print(f'\n{column}: ' + ', '.join(f'{value} {count} ({pct(count, top.sum())})' for value, count in top.head(6).items()))
        findings.append(f'{md(column)} ({md(key, 60)}): {counts_text(top)}.')
    for column in [c for c in frame.columns if k[c] == 'datetime'][:2]:
        first, last = frame[column].min(), frame[column].max()
        print(f'\n{column}: {first:%Y-%m-%d} to {last:%Y-%m-%d}')
        findings.append(f'{md(column)} ({md(key, 60)}) spans {first:%Y-%m-%d} to {last:%Y-%m-%d}.')
if not focus:
    studied = [key for key in tables if key not in duplicates]
    named = ', '.join(md(key, 60) for key in studied[:4]) + (f' and {count_of(len(studied) - 4, "more")}' if len(studied) > 4 else '')
    findings.append(f'No table ({named}) has a numeric, categorical or date column to study.' if studied
                    else 'No table has a numeric, categorical or date column to study.')
show_findings('overview', findings)`;
}
