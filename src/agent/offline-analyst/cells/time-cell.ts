import { pythonStringList } from '../python-literal.ts';
import { stageHeader } from '../stages.ts';
import { additiveHelper } from './additive-helper.ts';

/**
 * Date columns: the series over time (an Altair line chart for the first
 * table, a matplotlib panel for a second: never both),
 * its trend, the weekday and calendar-month patterns (both from the daily
 * series, never from weekly sums), and days that depart
 * from their neighbours (residual from a centred 7-day median, robust z-score).
 * `preferred` names (normalized) the numeric columns the instruction mentions;
 * else the measure is the first that adds up, then the first level or rate
 * (never a calendar part, a code or a serial number: `additive-helper.ts`).
 * Dated events (several rows a day) of a measure that adds up are totalled
 * per period; of one that does not (a price, a rate, a score) averaged over
 * the period's rows, and the label and the finding say so.
 */
export function timeCell(preferred: readonly string[]): string {
  return String.raw`${stageHeader('time')}
import altair as alt
preferred = ${pythonStringList(preferred)}
findings, chart = [], None
${additiveHelper}

def measure_of(word, measure):
    """'total revenue', but 'sum of Total Pieces' ('total Total Pieces' doubled the word the name begins with)."""
    if re.match(rf'{word}\b', str(measure), re.IGNORECASE):
        return f"{'sum' if word == 'total' else 'average'} of {measure}"
    return f'{word} {measure}'

timed = [key for key in focus if 'datetime' in kinds(tables[key]).values()][:2]
for key in timed:
    frame, k = tables[key], kinds(tables[key])
    where = f' in {md(key, 60)}' if len(timed) > 1 else ''  # with two tables, each claim names its own
    date = max((c for c in frame.columns if k[c] == 'datetime'), key=lambda c: frame[c].nunique())
    if frame[date].nunique() < 10:
        continue
    numbers = [c for c in frame.columns if k[c] == 'number']
    named = [c for p in preferred for c in numbers if re.sub(r'[\W_]+', '', c.lower()) == p]
    # Unnamed: a quantity that adds up first, then a level or a rate; a calendar part, a code or a serial number
    # is no measure over time.
    rank = {c: 0 if not_added(frame[c]) is None else 1 if not_added(frame[c])[0] in ('ratio', 'level') else 2 for c in numbers}
    measure = (named + sorted((c for c in numbers if rank[c] < 2), key=rank.get) + [None])[0]
    data = frame.dropna(subset=[date]).set_index(date).sort_index()
    regular = data.index.is_unique  # one row per date: a measured series; else events
    # Events of a measure that does not add up (a price, a rate, a score per row): its mean per period, never a total.
    why = None if measure is None else why_not_added(data[measure])
    level = measure is not None and not regular and why is not None
    span = (data.index.max() - data.index.min()).days
    dense = data.index.normalize().nunique() >= 0.3 * (span + 1)  # dated most days: weekdays mean something
    rule, period = ('D', 'day') if span <= 120 else ('W', 'week') if span <= 1100 else ('MS', 'month')
    # Never a finer grain than the data's own: monthly dates (a YYYYMM period) summed per week were mostly empty weeks.
    gaps = pd.Series(data.index.unique().sort_values()).diff().dt.days.dropna()
    step = gaps.median() if len(gaps) else 0
    own_grain = step >= 28 or (step >= 7 and rule == 'D')
    if own_grain:
        rule, period = ('QS', 'quarter') if step >= 80 else ('MS', 'month') if step >= 28 else ('W', 'week')
    if measure is None:
        daily, what = data.resample('D').size(), 'rows'
    else:
        daily = data[measure].resample('D').mean() if regular or level else data[measure].resample('D').sum()
        what = measure_of('mean' if regular or level else 'total', measure)
    if level:  # each period's mean over its rows (a mean of daily means would weigh a day of one row like a busy one)
        series = data[measure].resample(rule).mean().dropna()
    else:
        series = (daily.resample(rule).mean() if regular and measure else daily.resample(rule).sum()).dropna()
    # What the series holds, said exactly: a measured series is a mean of daily values over each week or month
    # ("mean visits per week" read as the mean of weekly totals).
    label = (f"{'weekly' if period == 'week' else 'monthly'} mean of daily {measure}"
             if regular and measure and period != 'day' and not own_grain else f'{what} per {period}')
    # Partial first/last periods look like drops in a total (a date of the data's own grain stands for its whole
    # period); a mean is no smaller for them.
    if not (regular and measure) and not level and rule != 'D' and len(series) > 3 and not own_grain:
        last_end = series.index[-1] if rule == 'W' else series.index[-1] + pd.offsets.MonthEnd(0)
        first_start = series.index[0] - pd.Timedelta(days=6) if rule == 'W' else series.index[0]
        series = series.iloc[int(data.index.min().normalize() > first_start) : len(series) - int(data.index.max().normalize() < last_end)]
    quarter = max(1, len(series) // 4)
    first, last = series.iloc[:quarter].mean(), series.iloc[-quarter:].mean()
    not_summed = f' (not added up: {measure} {why})' if level else ''
    print(f'{key}: {date} from {data.index.min():%Y-%m-%d} to {data.index.max():%Y-%m-%d}, {label}{not_summed}')
    print(series.describe().map(fmt).to_string())
    findings.append(f'{md(key, 60)}: {md(date)} runs from {data.index.min():%Y-%m-%d} to {data.index.max():%Y-%m-%d}; '
                    f'the {label} went from {fmt(first)} in the first quarter of that span to {fmt(last)} in the last ({pct(last - first, first)} change).'
                    + (f' {md(measure)} {why}, so each {period} shows the mean of its rows, not their total.' if level else ''))
    weekly = dense and span >= 14 and daily.notna().sum() >= 14
    # The series is the Altair chart (the first table's) or a matplotlib panel (a second table's), never both.
    series_chart = chart is None
    panels = (0 if series_chart else 1) + (1 if weekly else 0)
    axes = list(plt.subplots(1, panels, figsize=(6.5 * panels, 3.5), squeeze=False)[1].flat) if panels else []
    if not series_chart:
        axes[0].plot(series.index, series.to_numpy(), color='#4c78a8')
        axes[0].set_title(label, fontsize=10)
    if weekly:
        # Of a level: the mean of the rows dated on each weekday; else the mean day's value or total.
        values = data[measure] if level else daily
        weekday = values.groupby(values.index.dayofweek).mean()
        per_day = '' if level else ' per day'
        names = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun']
        axes[-1].bar([names[d] for d in weekday.index], weekday.to_numpy(), color='#72b7b2')
        axes[-1].set_title(f'{what}{per_day}, by weekday', fontsize=10)
        print('By weekday: ' + ', '.join(f'{names[d]} {fmt(v)}' for d, v in weekday.items()))
        findings.append(f'By weekday{where}, the {what}{per_day} is highest on {names[weekday.idxmax()]} ({fmt(weekday.max())}) and lowest on {names[weekday.idxmin()]} ({fmt(weekday.min())}).')
    # Data by quarter or coarser has no month-of-year pattern to show.
    if span >= 365 and step < 80:
        # By calendar month, from the daily series: weekly sums grouped by the month a week ends in counted a
        # week across two months wholly in one. Events: each calendar month's total (months the data covers in
        # full, or every month of monthly data), averaged over the years. A measured series: its mean per day.
        if regular and measure:
            month = daily.groupby(daily.index.month).mean()
            per_month = f'{what} per {period if own_grain else "day"}'
        elif level:  # the mean of each calendar month's rows, over the years
            month = data[measure].groupby(data.index.month).mean()
            per_month = what
        else:
            totals = daily.resample('MS').sum(min_count=1).dropna()  # a month with no data is no 0
            if not own_grain:
                totals = totals[(totals.index >= data.index.min().normalize())
                                & (totals.index + pd.offsets.MonthEnd(0) <= data.index.max().normalize())]
            month = totals.groupby(totals.index.month).mean()
            years = int(totals.groupby(totals.index.month).size().max()) if len(totals) else 0
            per_month = f'{what} per month' + (', averaged over the years,' if years > 1 else '')
        months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']
        print('By calendar month: ' + ', '.join(f'{months[m - 1]} {fmt(v)}' for m, v in month.items()))
        if month.nunique() > 1:
            findings.append(f'By calendar month{where}, the {per_month} is highest in {months[month.idxmax() - 1]} ({fmt(month.max())}) '
                            f'and lowest in {months[month.idxmin() - 1]} ({fmt(month.min())}).')
    marked = []
    if regular and measure and dense and span >= 21:
        baseline = daily.rolling(7, center=True, min_periods=3).median()
        residual = daily - baseline
        spread = (residual - residual.median()).abs().median() * 1.4826
        score = residual / spread if spread else residual * 0
        unusual = score[score.abs() >= 5].sort_values(key=abs, ascending=False).head(5)
        for when, z in unusual.items():
            marked.append(when)
            if not series_chart:
                axes[0].axvline(when, color='#e45756', alpha=0.5)
            findings.append(f'{when:%Y-%m-%d} stands out{where}: {md(measure)} was {fmt(daily[when])} against a local median of {fmt(baseline[when])} (robust z-score {fmt(z)}).')
        print(f'Days with |robust z-score| >= 5: {len(score[score.abs() >= 5])}')
    if panels:
        plt.gcf().suptitle(f'{key} over time')
        plt.gcf().tight_layout()
    if series_chart:
        points = pd.DataFrame({'period': series.index, 'value': series.to_numpy()})
        # Over a year or more, every tick names its year: vega's own labels show it only on a January tick.
        axis = alt.Axis(format='%b %Y') if span >= 300 else alt.Axis()
        chart = alt.Chart(points).mark_line().encode(x=alt.X('period:T', title=str(date), axis=axis), y=alt.Y('value:Q', title=label)).properties(title=f'{key}: {label}', width=600, height=240)
        if marked:
            rules = alt.Chart(pd.DataFrame({'period': marked})).mark_rule(color='#e45756', opacity=0.5).encode(x='period:T')
            chart = alt.layer(chart, rules)
show_findings('time', findings[:12])
chart`;
}
