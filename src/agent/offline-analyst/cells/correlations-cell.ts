import { stageHeader } from '../stages.ts';

/**
 * Relationships: Pearson correlations between numeric (and yes/no) columns,
 * with a heatmap, and how much a numeric column differs between the groups of
 * a categorical one (eta squared: the share of variance the groups explain).
 */
export function correlationsCell(): string {
  return String.raw`${stageHeader('correlations')}
findings, pairs, effects, heatmaps, k_of = [], [], [], 0, {}
for key in focus:
    frame, k = tables[key], kinds(tables[key])
    k_of[key] = k
    numeric = [c for c in frame.columns if k[c] in ('number', 'boolean')][:12]
    if len(numeric) >= 2:
        corr = frame[numeric].astype(float).corr()
        for i, a in enumerate(numeric):
            for b in numeric[i + 1:]:
                if pd.notna(corr.loc[a, b]):
                    pairs.append((abs(corr.loc[a, b]), corr.loc[a, b], key, a, b))
        if heatmaps < 2:
            size = 2 + 0.55 * len(numeric)
            fig, ax = plt.subplots(figsize=(size + 1.5, size))
            image = ax.imshow(corr.to_numpy(), cmap='RdBu_r', vmin=-1, vmax=1)
            labels = [str(c)[:24] for c in numeric]
            ax.set_xticks(range(len(labels)), labels, rotation=45, ha='right', fontsize=8)
            ax.set_yticks(range(len(labels)), labels, fontsize=8)
            for (i, j), r in np.ndenumerate(corr.to_numpy()):
                # White on the dark ends of the colour map (black on dark red could not be read).
                ax.text(j, i, '' if np.isnan(r) else f'{r:.2f}', ha='center', va='center', fontsize=7,
                        color='white' if not np.isnan(r) and abs(r) > 0.6 else 'black')
            fig.colorbar(image, ax=ax, shrink=0.8)
            ax.set_title(f'Correlations in {key}')
            fig.tight_layout()
            heatmaps += 1
    groups = [c for c in frame.columns if k[c] in ('category', 'boolean') and 2 <= frame[c].nunique() <= 30][:6]
    for group in groups:
        measures = [c for c in frame.columns if k[c] == 'number' or (k[c] == 'boolean' and k[group] == 'category')]
        for number in [c for c in measures if c != group][:10]:
            data = frame[[group, number]].dropna()
            data[number] = data[number].astype(float)
            if len(data) < 10:
                continue
            means = data.groupby(group)[number].mean().sort_values()
            total = ((data[number] - data[number].mean()) ** 2).sum()
            between = (data.groupby(group)[number].count() * (means - data[number].mean()) ** 2).sum()
            if total > 0:
                effects.append((between / total, key, group, number, means))
pairs.sort(key=lambda p: -p[0])
effects.sort(key=lambda e: -e[0])
print('Strongest correlations (Pearson r):')
for _, r, key, a, b in pairs[:8]:
    print(f'  {key}: {a} ~ {b}: r = {fmt(r)}')
for strength, r, key, a, b in pairs[:5]:
    if strength >= 0.3:
        word = 'strongly' if strength >= 0.7 else 'moderately' if strength >= 0.5 else 'weakly'
        findings.append(f'{md(a)} and {md(b)} ({md(key, 60)}) are {word} {"positively" if r > 0 else "negatively"} correlated (r = {fmt(r)}).')
if pairs and pairs[0][0] < 0.3:
    _, r, key, a, b = pairs[0]
    findings.append(f'No two numeric columns are correlated beyond |r| = 0.3 (the strongest pair, {md(a)} and {md(b)} in {md(key, 60)}, has r = {fmt(r)}).')
for eta, key, group, number, means in effects[:3]:
    size = 'large' if eta >= 0.14 else 'medium' if eta >= 0.06 else 'small' if eta >= 0.01 else 'negligible'
    share = k_of[key][number] == 'boolean'  # the mean of a yes/no column is the share of yes
    show = (lambda v: pct(v, 1)) if share else fmt
    print(f'\n{number} by {group} ({key}), eta squared = {fmt(eta)}:')
    print(means.map(show).to_string())
    findings.append(f'{md(number)} differs by {md(group)} in {md(key, 60)} ({size} effect, eta squared = {fmt(eta)}): {"share" if share else "mean"} '
                    f'{show(means.iloc[-1])} for {md(means.index[-1])} against {show(means.iloc[0])} for {md(means.index[0])}.')
if effects:
    eta, key, group, number, means = effects[0]
    fig, ax = plt.subplots(figsize=(7, 0.35 * len(means) + 1.5))
    ax.barh([str(v)[:24] for v in means.index], means.to_numpy(), color='#b279a2')
    ax.set_title(f'Mean {number} by {group} ({key})', fontsize=10)
    fig.tight_layout()
show_findings('correlations', findings)`;
}
