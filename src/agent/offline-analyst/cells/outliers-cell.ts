import { stageHeader } from '../stages.ts';

/** Outliers by the IQR rule: values below Q1 - 1.5 IQR or above Q3 + 1.5 IQR, with box plots. */
export function outliersCell(maxColumnsPerChart: number): string {
  return String.raw`${stageHeader('outliers')}
rows = []
for key in focus:
    frame, k = tables[key], kinds(tables[key])
    for column in [c for c in frame.columns if k[c] == 'number'][:8]:
        values = frame[column].dropna()
        q1, q3 = values.quantile(0.25), values.quantile(0.75)
        iqr = q3 - q1
        if len(values) < 8 or iqr == 0:
            continue
        low, high = q1 - 1.5 * iqr, q3 + 1.5 * iqr
        outside = values[(values < low) | (values > high)]
        extreme = outside.loc[(outside - values.median()).abs().idxmax()] if len(outside) else None
        rows.append({'table': key, 'column': column, 'Q1': fmt(q1), 'Q3': fmt(q3), 'lower fence': fmt(low), 'upper fence': fmt(high),
                     'outliers': len(outside), 'share': pct(len(outside), len(values)), 'most extreme': fmt(extreme),
                     '_share': len(outside) / len(values), '_values': values})
findings = []
def of_tables(keys):
    keys = list(dict.fromkeys(keys))  # named: the same words from two sub-analyses would say two different things
    return ', '.join(md(key, 60) for key in keys[:4]) + (f' and {count_of(len(keys) - 4, "more table")}' if len(keys) > 4 else '')
if rows:
    table = pd.DataFrame(rows).sort_values('_share', ascending=False, kind='stable')
    print(table.drop(columns=['_share', '_values']).to_string(index=False))
    records = table.to_dict('records')
    for row in records:
        if row['outliers'] and len(findings) < 6:
            findings.append(f"{md(row['column'])} ({md(row['table'], 60)}): {count_of(row['outliers'], 'value')} ({row['share']}) outside the IQR fences "
                            f"[{row['lower fence']}, {row['upper fence']}]; the most extreme is {row['most extreme']}.")
    shown = records[:${maxColumnsPerChart}]
    fig, axes = plt.subplots(1, len(shown), figsize=(2.6 * len(shown) + 1, 3.6), squeeze=False)
    for ax, row in zip(axes.flat, shown):
        ax.boxplot(row['_values'].to_numpy(), widths=0.5)
        # Wrapped rather than cut: two long names cut at 24 characters could not be told apart.
        ax.set_title(textwrap.fill(str(row['column'])[:60], 22), fontsize=9)
        ax.set_xticks([])
    fig.suptitle('Box plots (whiskers at 1.5 IQR), columns with the most outliers first')
    fig.tight_layout()
    if not findings:
        findings.append(f"No numeric column of {of_tables(row['table'] for row in rows)} has values outside its IQR fences.")
else:
    findings.append(f'No numeric column of {of_tables(focus)} has enough spread to look for outliers.' if focus else 'No numeric column with enough spread to look for outliers.')
show_findings('outliers', findings)`;
}
