import { stageHeader } from '../stages.ts';

/** Histograms of the numeric columns (a few per table) and their skew. */
export function distributionsCell(maxColumnsPerChart: number): string {
  return String.raw`${stageHeader('distributions')}
findings, charted, charted_in = [], 0, []
for key in focus:
    frame, k = tables[key], kinds(tables[key])
    columns = [c for c in frame.columns if k[c] == 'number'][:${maxColumnsPerChart}]
    if not columns:
        continue
    width = min(3, len(columns))
    height = math.ceil(len(columns) / width)
    fig, axes = plt.subplots(height, width, figsize=(4 * width, 3 * height), squeeze=False)
    for ax in axes.flat[len(columns):]:
        ax.set_visible(False)
    for ax, column in zip(axes.flat, columns):
        values = frame[column].dropna()
        ax.hist(values, bins=int(min(40, max(5, values.nunique()))), color='#4c78a8')
        ax.set_title(str(column)[:40], fontsize=10)
        skew = values.skew()
        print(f'{key} / {column}: mean {fmt(values.mean())}, median {fmt(values.median())}, '
              f'std {fmt(values.std())}, skewness {fmt(skew)}')
        if pd.notna(skew) and abs(skew) >= 1:
            side = 'right (a long tail of large values)' if skew > 0 else 'left (a long tail of small values)'
            # The median and mean back the claim only when the mean lies on the tail's side of the median.
            agree = (values.mean() > values.median()) == (skew > 0) and values.mean() != values.median()
            centre = f', median {fmt(values.median())} against a mean of {fmt(values.mean())}' if agree else ''
            findings.append(f'{md(column)} in {md(key, 60)} is skewed to the {side}: skewness {fmt(skew)}{centre}.')
        charted += 1
        charted_in += [] if key in charted_in else [key]
    fig.suptitle(f'Distributions of numeric columns in {key}')
    fig.tight_layout()
if charted and not findings:
    # Named with its tables: the same words from two sub-analyses would say two different things.
    of = ', '.join(md(key, 60) for key in charted_in[:4]) + (f' and {count_of(len(charted_in) - 4, "more table")}' if len(charted_in) > 4 else '')
    findings.append(f'None of the charted numeric columns of {of} is strongly skewed (all have |skewness| below 1).')
show_findings('distributions', findings[:8], charted=charted)`;
}
