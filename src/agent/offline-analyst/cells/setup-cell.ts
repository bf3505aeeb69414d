import { stageHeader } from '../stages.ts';

/**
 * A column's values from value_counts, as findings say them: how many, and the most common, honest about
 * ties and about values that are all distinct. The focus cell defines it too: a follow-up runs it in a kernel
 * whose setup cell may be a replayed one from before this helper.
 */
export const countsTextHelper = String.raw`def counts_text(counts):
    """How many values, and the most common: a tie is named, and values all distinct are said to be."""
    n, total = len(counts), counts.sum()
    top = counts.max() if n else 0
    if n > 1 and top == 1:
        return f'all {n} values are distinct'
    if n == 1:
        return f'a single value, {md(counts.index[0])}'
    tied = [value for value, count in counts.items() if count == top]
    if len(tied) == n:
        return f'{n} distinct values, all equally common ({pct(top, total)} each)'
    if len(tied) == 1:
        return f'{n} distinct values; the most common is {md(tied[0])} ({pct(top, total)})'
    named = [md(value) for value in tied[:4]] + ([f'{len(tied) - 4} more'] if len(tied) > 4 else [])
    return f'{n} distinct values; ' + ', '.join(named[:-1]) + f' and {named[-1]} are the most common, {pct(top, total)} each'`;

/**
 * The helpers every later cell uses. They live in the kernel, so a later cell
 * that fails with a NameError on one of them tells the analyst that the
 * kernel lost its state (see `conversation.ts`).
 *
 * `fmt` is the one number format of every printed finding: the final answer
 * quotes findings verbatim, so its numbers are exactly the printed ones.
 */
export function setupCell(): string {
  return String.raw`${stageHeader('setup')}
import json, math, re, sqlite3, textwrap, warnings
import numpy as np
import pandas as pd
import matplotlib.pyplot as plt
warnings.filterwarnings('ignore')
pd.set_option('display.width', 120)
pd.set_option('display.max_columns', 12)

def fmt(value):
    """Numbers as printed here are quoted exactly in the final summary."""
    if value is None or pd.isna(value):
        return 'n/a'
    value = float(value)
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if abs(value) >= 10000:
        return f'{value:.0f}'
    if abs(value) >= 100:
        return f'{value:.1f}'
    return f'{value:.2f}' if abs(value) >= 1 else f'{value:.3g}'

def value_text(value):
    """A value from the data as printed: a whole number without '.0' (integers with gaps are read as floats)."""
    if isinstance(value, (float, np.floating)) and math.isfinite(value) and float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return str(value)

def pct(part, whole):
    return f'{100 * part / whole:.1f}%' if whole else 'n/a'

def count_of(count, noun):
    return f'{count} {noun}' + ('' if count == 1 else 's')

${countsTextHelper}
def md(text, limit=40):
    """A name or value from the data, as inline code in the Markdown summary."""
    text = re.sub(r'\s+', ' ', str(text)).strip().replace(chr(96), "'")
    return chr(96) + (text if len(text) <= limit else text[: limit - 1] + '…') + chr(96)

MARKDOWN_OPENERS = re.compile('([' + re.escape(chr(92) + chr(96) + '[]<>') + '])')

def md_text(text):
    """Text a reader wrote from the data (a note naming a sheet, a JSON key, a file) as plain text in the Markdown
    summary: escaped so that no link, image, HTML tag or code span can start in it."""
    return MARKDOWN_OPENERS.sub(chr(92) * 3 + '1', re.sub(r'\s+', ' ', str(text)).strip())

def kind_of(series):
    values = series.dropna()
    if values.empty:
        return 'empty'
    if pd.api.types.is_bool_dtype(series):
        return 'boolean'
    if pd.api.types.is_datetime64_any_dtype(series):
        return 'datetime'
    if values.nunique() == 1:
        return 'constant'
    if pd.api.types.is_numeric_dtype(series):
        if values.nunique() <= 2:
            return 'boolean'
        # An *_id column holds codes (keys, foreign keys): never a measure, unique or not.
        return 'id' if re.search(r'(^|_| )id$', str(series.name).lower()) else 'number'
    text = values.astype(str)
    if text.str.fullmatch(r'\d+').all() and (text.str.len().max() >= 16 or re.search(r'(^|_| )(id|code|zip)$', str(series.name).lower())
                                            or (text.str.len().gt(1) & text.str.startswith('0')).any()):
        return 'id'  # digit strings kept as text by the profile: 18-digit ids, zero-padded codes
    if text.str.len().mean() > 40:
        return 'text'
    if text.nunique() == len(text) and len(text) > 20:
        return 'id'
    return 'category' if text.nunique() <= min(50, max(2, len(text) // 2)) else 'text'

_kinds_seen = {}

def kinds(frame):
    """Column kinds, computed once per table (tables are not changed after loading)."""
    key = (id(frame), frame.shape)
    if key not in _kinds_seen:  # the frame is kept with its kinds, so its id cannot be reused
        _kinds_seen[key] = (frame, {column: kind_of(frame[column]) for column in frame.columns})
    return _kinds_seen[key][1]

def show_findings(stage, findings, **facts):
    """Findings go verbatim into the summary; the facts line steers the next step."""
    print('\nFindings:' if findings else '\nFindings: none in this step.')
    for line in findings:
        print('- ' + re.sub(r'\s+', ' ', line).strip())  # one line each, whatever the data held
    print('\nfacts: ' + json.dumps({'stage': stage, **facts}, default=str))

print('Helpers ready: fmt, value_text, pct, count_of, counts_text, md, kind_of, kinds, show_findings.')`;
}
