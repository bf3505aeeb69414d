import { pythonStringList } from '../python-literal.ts';
import { stageHeader } from '../stages.ts';
import { countsTextHelper } from './setup-cell.ts';

/**
 * A breakdown of the columns the instruction names (`wanted`: normalized
 * column names in the instruction's order), in the fewest tables that hold
 * them: per table, the first named numeric column as the measure, split by
 * each named category; the named numeric columns against each other
 * (correlation and means by quartile).
 */
export function focusCell(wanted: readonly string[]): string {
  return String.raw`${stageHeader('focus')}
import itertools
wanted = ${pythonStringList(wanted)}
${countsTextHelper}

def norm(text):
    return re.sub(r'[\W_]+', '', str(text).lower())
def named_in(key):
    return sorted((c for c in tables[key].columns if norm(c) in wanted), key=lambda c: wanted.index(norm(c)))
candidates = sorted((key for key in tables if key not in duplicates and named_in(key)), key=lambda key: (-len(named_in(key)), key not in focus))
chosen, covered = [], set()
for key in candidates:  # the fewest tables that hold every named column, at most three
    if len(chosen) < 3 and any(norm(c) not in covered for c in named_in(key)):
        chosen.append(key)
        covered.update(norm(c) for c in named_in(key))
findings = [] if chosen else ['None of the columns the instruction names was found in the loaded tables.']
for key in chosen:
    frame, k, matched = tables[key], kinds(tables[key]), named_in(key)
    print(f'Columns named in the instruction, found in {key}: ' + ', '.join(matched))
    groups = [c for c in matched if k[c] in ('category', 'boolean') or (k[c] in ('text', 'id') and frame[c].nunique() <= 30)]
    numbers = [c for c in matched if k[c] == 'number']
    target = numbers[0] if numbers else None
    if target is not None and not groups:  # a measure alone: split it by the table's own categories
        groups = [c for c in frame.columns if k[c] in ('category', 'boolean') and frame[c].nunique() <= 30][:2]
    panels, pairs = [], [p for p in itertools.combinations(numbers, 2)][:3]
    for group in groups[:4]:
        if target is None:
            findings.append(f'{md(group)} ({md(key, 60)}): {counts_text(frame[group].value_counts())}.')
            continue
        summary = frame.groupby(group)[target].agg(['count', 'sum', 'mean']).sort_values('sum', ascending=False)
        summary['share'] = [pct(value, summary['sum'].sum()) for value in summary['sum']]
        print(f'\n{target} by {group}:')
        print(summary.head(12).to_string(formatters={'sum': fmt, 'mean': fmt}))
        findings.append(f'By {md(group)} in {md(key, 60)}: {md(summary.index[0])} brings the largest total {md(target)} ({fmt(summary["sum"].iloc[0])}, {summary["share"].iloc[0]} of it); '
                        f'the mean per row is highest for {md(summary["mean"].idxmax())} ({fmt(summary["mean"].max())}) and lowest for {md(summary["mean"].idxmin())} ({fmt(summary["mean"].min())}).')
        panels.append((group, summary['sum'].head(10)))
    for a, b in pairs:
        data = frame[[a, b]].dropna()
        if len(data) < 8:
            continue
        r = data[a].corr(data[b])
        means = data.groupby(pd.qcut(data[a], 4, duplicates='drop'), observed=True)[b].mean()
        print(f'\nMean {b} by quartile of {a} (r = {fmt(r)}):')
        print(means.map(fmt).to_string())
        findings.append(f'{md(a)} and {md(b)} ({md(key, 60)}): r = {fmt(r)}; the mean {md(b)} goes from {fmt(means.iloc[0])} in the lowest quarter of {md(a)} to {fmt(means.iloc[-1])} in the highest.')
    if panels or pairs:
        count = len(panels) + (1 if pairs else 0)
        fig, axes = plt.subplots(1, count, figsize=(4.5 * count, 3.6), squeeze=False)
        for ax, (group, sums) in zip(axes.flat, panels):
            ax.barh([str(v)[:24] for v in sums.index[::-1]], sums.to_numpy()[::-1], color='#4c78a8')
            ax.set_title(f'total {target} by {group}'[:48], fontsize=10)
        if pairs:
            a, b = pairs[0]
            sample = frame[[a, b]].dropna()
            sample = sample.sample(min(2000, len(sample)), random_state=0)
            axes.flat[count - 1].scatter(sample[a], sample[b], s=8, alpha=0.4, color='#e45756')
            axes.flat[count - 1].set_xlabel(str(a)[:30])
            axes.flat[count - 1].set_ylabel(str(b)[:30])
        fig.suptitle(f'The columns named in the instruction ({key})')
        fig.tight_layout()
if chosen and not findings:
    named = [md(c) for key in chosen for c in named_in(key)]
    findings.append('The columns the instruction names (' + ', '.join(named[:8]) + ') hold no measure to compare and no groups to count.')
show_findings('focus', findings[:10], studied=chosen)`;
}
