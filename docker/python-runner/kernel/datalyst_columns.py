"""One column of a profiled table: dtype, kind, missing and unique counts, samples, range."""

from __future__ import annotations

import json
import math
import re
import sys

MAX_SAMPLES = 3
MAX_SAMPLE_CHARS = 60


ID_NAME = re.compile(r'(^|[_\s])(id|key|code|uuid)$|^id[_\s]|Id$|ID$', re.IGNORECASE)


def profile_column(name: str, series) -> dict:
    import pandas as pd
    from pandas.api import types

    if series.dtype == object and pd.api.types.infer_dtype(series, skipna=True) in ('bytes', 'mixed'):
        # A BLOB column (SQLite): its bytes are no text, and decoding them failed the whole file.
        series = series.map(lambda value: '<%d bytes>' % len(value) if isinstance(value, (bytes, bytearray)) else value)
    missing = int(series.isna().sum())
    present = series.dropna()
    try:
        unique = int(present.nunique())
    except TypeError:  # lists or dicts in a JSON column
        unique = None
    kind = column_kind(name, series, present, unique)
    minimum = maximum = None
    if len(present) and (types.is_numeric_dtype(series) and not types.is_bool_dtype(series)
                         or types.is_datetime64_any_dtype(series)):
        minimum, maximum = text_value(present.min()), text_value(present.max())
    elif kind == 'datetime' and len(present):
        parsed = pd.to_datetime(present, errors='coerce').dropna()
        if len(parsed):
            minimum, maximum = text_value(parsed.min()), text_value(parsed.max())
    samples: list[str] = []
    for value in present.head(2000).tolist():
        text = text_value(value)
        if text not in samples:
            samples.append(text)
        if len(samples) >= MAX_SAMPLES:
            break
    profile = {
        'name': name,
        'dtype': str(series.dtype),
        'kind': kind,
        'missing': missing,
        'unique': unique,
        'samples': samples,
        'min': minimum,
        'max': maximum,
    }
    profile.update(column_statistics(series, present, kind))
    return profile


HISTOGRAM_BINS = 12
MAX_TOP_VALUES = 5


def finite(value) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def column_statistics(series, present, kind: str) -> dict:
    """Mean, skewness and a histogram of a measure; the most frequent values of the others (for reports)."""
    import numpy as np

    statistics: dict = {}
    if kind in ('number', 'integer') and len(present):
        values = present.to_numpy(dtype='float64', na_value=np.nan)
        values = values[np.isfinite(values)]
        if len(values):
            statistics['mean'] = finite(values.mean())
            statistics['std'] = finite(values.std(ddof=1)) if len(values) > 1 else None
            statistics['skewness'] = finite(present.astype('float64').skew()) if len(values) > 2 else None
            try:
                counts, edges = np.histogram(values, bins=HISTOGRAM_BINS)
            except ValueError:  # 64-bit integers a float cannot tell apart (ns timestamps): no bins of any width
                counts = edges = None
            if counts is not None:
                statistics['histogram'] = {'low': finite(edges[0]), 'high': finite(edges[-1]),
                                           'counts': [int(count) for count in counts]}
    elif kind in ('category', 'boolean', 'text', 'id') and len(present):
        try:
            counts = present.astype(str).value_counts().head(MAX_TOP_VALUES)
        except TypeError:
            counts = None
        if counts is not None:
            statistics['topValues'] = [{'value': text_value(value), 'count': int(count)} for value, count in counts.items()]
    return statistics


def column_kind(name: str, series, present, unique: int | None) -> str:
    from pandas.api import types

    if len(present) == 0:
        return 'empty'
    if types.is_bool_dtype(series):
        return 'boolean'
    if types.is_datetime64_any_dtype(series):
        return 'datetime'
    if types.is_numeric_dtype(series):
        integral = types.is_integer_dtype(series) or bool((present % 1 == 0).all())
        # An *_id column holds codes (keys, foreign keys): never a measure, unique or not.
        if integral and ID_NAME.search(name):
            return 'id'
        return 'integer' if integral else 'number'
    values = present.head(2000)
    if unique is None:
        return 'text'
    strings = values.astype(str)
    lowered = set(strings.str.strip().str.lower().unique())
    if lowered and lowered <= {'true', 'false', 'yes', 'no', 't', 'f', 'y', 'n'} and len(lowered) <= 2:
        return 'boolean'
    if looks_like_dates(strings):
        return 'datetime'
    digits = strings.str.fullmatch(r'\d+')
    if bool(digits.all()) and (ID_NAME.search(name) or strings.str.len().max() >= 16
                               or bool((strings.str.len().gt(1) & strings.str.startswith('0')).any())):
        return 'id'  # codes kept as text: 18-digit ids, zero-padded zips
    # Every value different: an identifier, when the name says so or the values are short codes.
    if unique == len(present) and (ID_NAME.search(name) and len(present) > 1 or len(present) >= 10
                                   and strings.str.len().max() <= 40 and not strings.str.contains(r'\s').any()):
        return 'id'
    if unique <= max(20, int(len(present) * 0.05)) and strings.str.len().mean() <= 60:
        return 'category'
    return 'text'


# ISO dates, also with a time zone (2024-03-01T10:00:00Z, +01:00), and D/M/Y-style ones.
DATE_LIKE = re.compile(r'^\d{4}-\d{1,2}-\d{1,2}([ T]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$'
                       r'|^\d{1,2}[./-]\d{1,2}[./-]\d{2,4}( \d{1,2}:\d{2}(:\d{2})?)?$')


def looks_like_dates(strings) -> bool:
    sample = strings.head(200).str.strip()
    if len(sample) == 0:
        return False
    return bool(sample.str.match(DATE_LIKE).mean() >= 0.9)


def looks_numeric(text: str) -> bool:
    value = text.strip().replace(',', '').replace(' ', '')
    if not value:
        return False
    try:
        float(value)
        return True
    except ValueError:
        return False


def is_missing(value: object) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    if isinstance(value, str) and value.strip() == '':
        return True
    pandas = sys.modules.get('pandas')
    if pandas is not None and value is pandas.NaT:
        return True
    return False


def text_value(value: object) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        text = str(int(value))
    elif hasattr(value, 'isoformat') and not isinstance(value, str):
        text = str(value)
        if text.endswith(' 00:00:00'):
            text = text[:-9]
    elif isinstance(value, (dict, list)):
        text = json.dumps(value, default=str, ensure_ascii=False)
    else:
        text = str(value)
    return text if len(text) <= MAX_SAMPLE_CHARS else text[:MAX_SAMPLE_CHARS - 1] + '…'
