import { pythonStringList } from '../python-literal.ts';
import { stageHeader } from '../stages.ts';
import { additiveHelper } from './additive-helper.ts';
import { countsTextHelper } from './setup-cell.ts';

/**
 * A breakdown of the columns the instruction names (`wanted`: normalized
 * column names in the instruction's order), in the fewest tables that hold
 * them: per table, the first named numeric column as the measure, split by
 * each named category; the named numeric columns against each other
 * (correlation and means by quartile). A measure that adds up gets its total
 * per group and each total's share of their sum; one that does not (a
 * percentage, a calendar part, a price: see `additive-helper.ts`) its mean per
 * group, with the reason. Rows with no group are left out of a breakdown, and
 * the finding says how many.
 */
export function focusCell(wanted: readonly string[]): string {
  return String.raw`${stageHeader('focus')}
import itertools
wanted = ${pythonStringList(wanted)}
${countsTextHelper}
${additiveHelper}

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
    target_why = None if target is None else why_not_added(frame[target])
    for group in groups[:4]:
        blank = int(frame[group].isna().sum())  # rows with no group: groupby leaves them out, so it is said
        left_out = f' {blank} of the {len(frame)} rows have no {md(group)} and are left out.' if blank else ''
        if target is None:
            counts = frame[group].value_counts()
            counted = f' (of the {int(counts.sum())} rows that have one)' if blank else ''
            findings.append(f'{md(group)} ({md(key, 60)}): {counts_text(counts)}{counted}.{left_out}')
            continue
        data = frame[[group, target]].dropna()
        if data.empty:
            continue
        no_value = len(frame) - blank - len(data)  # rows with a group but no value of the measure
        if target_why is None:  # a quantity that adds up: totals per group, and each total's share of their sum
            summary = data.groupby(group)[target].agg(['count', 'sum', 'mean']).sort_values('sum', ascending=False)
            total = summary['sum'].sum()
            summary['share'] = [pct(value, total) for value in summary['sum']]
            scope = '' if len(data) == len(frame) else f' (its total {fmt(total)}, over the {len(data)} of the {len(frame)} rows that have both)'
            print(f'\n{target} by {group}{scope}:')
            print(summary.head(12).to_string(formatters={'sum': fmt, 'mean': fmt}))
            # The share is of what was summed: of every row's value ("of it"), or of the rows that have a group and a value.
            share_of = 'of it' if not blank and not no_value else (
                f'of the total {fmt(total)} over the {len(data)} rows that have a {md(group)}' + (f' and a {md(target)}' if no_value else ''))
            findings.append(f'By {md(group)} in {md(key, 60)}: {md(summary.index[0])} brings the largest total {md(target)} '
                            f'({fmt(summary["sum"].iloc[0])}, {summary["share"].iloc[0]} {share_of}); '
                            f'the mean per row is highest for {md(summary["mean"].idxmax())} ({fmt(summary["mean"].max())}) '
                            f'and lowest for {md(summary["mean"].idxmin())} ({fmt(summary["mean"].min())}).{left_out}')
            panels.append((group, summary['sum'].head(10), f'total {target} by {group}'))
        else:  # a percentage, a calendar part, a price: its mean per group, never a total
            summary = data.groupby(group)[target].agg(['count', 'mean', 'median']).sort_values('mean', ascending=False)
            print(f'\n{target} by {group}, its mean and median per group (not added up: it {target_why}):')
            print(summary.head(12).to_string(formatters={'mean': fmt, 'median': fmt}))
            findings.append(f'By {md(group)} in {md(key, 60)}: {md(target)} {target_why}, so it is compared by its mean per group, not added up: '
                            f'highest for {md(summary.index[0])} ({fmt(summary["mean"].iloc[0])}), '
                            f'lowest for {md(summary.index[-1])} ({fmt(summary["mean"].iloc[-1])}).{left_out}')
            panels.append((group, summary['mean'].head(10), f'mean {target} by {group}'))
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
        for ax, (group, values, title) in zip(axes.flat, panels):
            ax.barh([str(v)[:24] for v in values.index[::-1]], values.to_numpy()[::-1], color='#4c78a8')
            ax.set_title(title[:48], fontsize=10)
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
