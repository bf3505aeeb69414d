/**
 * Which measures a breakdown may add up. A careful analyst totals only
 * quantities that add across rows (amounts, counts, units); a percentage,
 * a calendar part or a price per row is compared by its mean per group, never
 * as "the largest total … % of it". The rule, in order, from the column's
 * name (its words: `discount_pct` → discount, pct; `tranMonth` → tran, month)
 * and its values:
 *
 * 1. a `%` in the name, or a word pct, percent, percentage, rate, ratio,
 *    share, proportion or fraction: a percentage, rate or ratio (the answer
 *    adds when its values lie between 0 and 1 or 0 and 100);
 * 2. a word year, fy, quarter, month, week, weekday, day, hour, minute or
 *    second, and whole numbers only: a calendar part;
 * 3. a word score, rating, grade, rank, index, price, age, average, avg,
 *    mean, median, temperature, latitude or longitude: a level of each row;
 * 4. a last word id, code, key, zip, postcode, no, nr, num, sku or phone: a
 *    code (columns named `*_id` are identifiers already, never measures);
 * 5. 20 or more whole numbers, each once, in an unbroken run (1000, 1001, …):
 *    a serial number.
 *
 * Anything else adds up. Plural words do not count ("days_absent" and
 * "shares" are quantities). `why_not_added` returns the reason in the words
 * the finding uses, so the answer says what was computed and why;
 * `not_added` also names which of the five it is.
 *
 * Defined in each cell that uses it (the time step, the focus step): a
 * follow-up runs the focus cell in a kernel whose setup cell may be a
 * replayed one from before this helper.
 */
export const additiveHelper = String.raw`RATIO_WORDS = {'pct', 'percent', 'percentage', 'rate', 'ratio', 'share', 'proportion', 'fraction'}
CALENDAR_WORDS = {'year', 'yr', 'fy', 'quarter', 'month', 'week', 'weekday', 'day', 'hour', 'minute', 'second'}
LEVEL_WORDS = {'score', 'rating', 'grade', 'rank', 'index', 'price', 'age', 'average', 'avg', 'mean', 'median',
               'temperature', 'latitude', 'longitude'}
CODE_WORDS = {'id', 'code', 'key', 'zip', 'zipcode', 'postcode', 'no', 'nr', 'num', 'sku', 'phone'}

def name_words(name):
    """The words of a column name: 'tranMonth' → tran, month; 'discount_pct' → discount, pct."""
    spaced = re.sub(r'([a-z])([A-Z])', r'\1 \2', str(name))
    return [word for word in re.split(r'[\W_]+', spaced.lower()) if word]

def not_added(series):
    """None when a measure adds up across rows (amounts, counts, units); else (kind, why): kind one of 'ratio',
    'calendar', 'level', 'code', 'serial', and why as the finding says it."""
    words, values = name_words(series.name), pd.to_numeric(series, errors='coerce').dropna()
    if values.empty:
        return None
    whole = bool((values == values.round()).all())
    if '%' in str(series.name) or RATIO_WORDS.intersection(words):
        low, high = values.min(), values.max()
        bound = '1' if low >= 0 and high <= 1 else '100' if low >= 0 and high <= 100 else None
        return 'ratio', 'is a percentage, rate or ratio (its name says so' + (f', and its values lie between 0 and {bound})' if bound else ')')
    if CALENDAR_WORDS.intersection(words) and whole:
        return 'calendar', f'looks like a calendar part (whole numbers named {md(series.name)})'
    if LEVEL_WORDS.intersection(words):
        return 'level', 'is a level of each row (a score, rating, price, age or average)'
    if words and words[-1] in CODE_WORDS:
        return 'code', 'looks like a code (its name says so)'
    if whole and len(values) >= 20 and values.is_unique and values.max() - values.min() == len(values) - 1:
        return 'serial', 'looks like a serial number (whole numbers, each once, in an unbroken run)'
    return None

def why_not_added(series):
    """None when a measure adds up across rows; else why it does not, as the finding says it."""
    found = not_added(series)
    return None if found is None else found[1]`;
