import { stageHeader } from '../stages.ts';

/**
 * The most frequent values of categorical columns and the share of true
 * values of yes/no columns. The first categorical column is an Altair chart
 * (the kernel captures it as vega-lite), the others matplotlib bars: each
 * column is charted once.
 */
export function categoriesCell(maxColumnsPerChart: number): string {
  return String.raw`${stageHeader('categories')}
import altair as alt
findings, chart = [], None
for key in focus:
    frame, k = tables[key], kinds(tables[key])
    columns = [c for c in frame.columns if k[c] == 'category'][:${maxColumnsPerChart}]
    flags = [c for c in frame.columns if k[c] == 'boolean'][:12]
    if not columns and not flags:
        continue
    # The first categorical column is the Altair chart; the matplotlib panels hold the others, so no data is charted twice.
    paneled = columns
    if chart is None and columns:
        top = frame[columns[0]].value_counts().head(10)
        data = pd.DataFrame({'value': [str(v) for v in top.index], 'rows': top.to_numpy()})
        chart = alt.Chart(data).mark_bar().encode(x='rows:Q', y=alt.Y('value:N', sort='-x', title=str(columns[0]))).properties(title=f'Most frequent values of {columns[0]} in {key}', width=420)
        paneled = columns[1:]
    panels = len(paneled) + (1 if flags else 0)
    axes = list(plt.subplots(1, panels, figsize=(4.5 * panels, 3.5), squeeze=False)[1].flat) if panels else []
    panel_of = dict(zip(paneled, axes))
    for column in columns:
        counts = frame[column].value_counts()
        top = counts.head(10)
        if column in panel_of:
            ax = panel_of[column]
            ax.barh([str(v)[:24] for v in top.index[::-1]], top.to_numpy()[::-1], color='#f58518')
            ax.set_title(str(column)[:40], fontsize=10)
        shares = ', '.join(f'{md(v)} {pct(n, counts.sum())}' for v, n in counts.head(3).items())
        print(f'{key} / {column}: {len(counts)} values; ' + ', '.join(f'{v} {n}' for v, n in top.items()))
        if counts.max() == counts.min():  # no value stands out: 'the top ones' would be any three of them
            findings.append(f'{md(column)} ({md(key, 60)}): {counts_text(counts)}.')
        else:
            findings.append(f'{md(column)} ({md(key, 60)}): {count_of(len(counts), "distinct value")}; the top ones are {shares}.')
    if flags:
        values = frame[flags].dropna(how='all')
        shares = pd.Series({c: (values[c] == values[c].max()).mean() for c in flags}).sort_values(ascending=False)
        ax = axes[panels - 1]
        ax.barh([str(c)[:24] for c in shares.index[::-1]], shares.to_numpy()[::-1] * 100, color='#54a24b')
        ax.set_title('share of rows where true (%)', fontsize=10)
        for column, share in shares.items():
            top_value = values[column].max()
            label = '' if isinstance(top_value, (bool, np.bool_)) else f' = {top_value}'
            print(f'{key} / {column}{label}: {pct(share, 1)} of rows')
            findings.append(f'{md(str(column) + label)} holds for {pct(share, 1)} of the rows of {md(key, 60)}.')
    if panels:
        plt.gcf().suptitle(f'Most frequent values in {key}')
        plt.gcf().tight_layout()
show_findings('categories', findings[:10])
chart`;
}
