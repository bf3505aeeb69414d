"""Workspace profile: what each file holds and how to load it, computed inside the sandbox.

For every file of the working directory: its format, each table in it (CSV,
every Excel sheet, JSON records, every SQLite table), the row count, and per
column the dtype, a kind, missing and unique counts, a few samples and the
range. Each table comes with `loadCode`, a pandas expression that loads it the
same way the profile did (the profile runs exactly that call).

CSV files are read the way a careful person would: the encoding is detected
(UTF-8, UTF-8 with BOM, else cp1252 or latin-1), the delimiter sniffed, a
metadata preamble above the header skipped, a footer below the data cut off,
missing-value markers ('.', whitespace or no-break spaces) and thousands
separators recognised.

The output matches src/sandbox/workspace-profile.ts. A file that cannot be
read gets an `error`; the others are still profiled. The profile runs in its
own namespace: the user's variables are never touched.
"""

from __future__ import annotations

import collections
import json
import os
import re
import sqlite3
import urllib.parse
import warnings
import zipfile

from datalyst_columns import ID_NAME, is_missing, looks_numeric, profile_column, text_value
from datalyst_csv_dialect import (HEADER_SEARCH_ROWS, SNIFF_BYTES, NotText, find_missing_markers, find_number_format,
                                  find_structure, detect_encoding, looks_delimited, sample_rows, sniff_delimiter)
from datalyst_text import MAX_NAME_CHARS, MAX_NOTE_CHARS, clip_text, short_text

MAX_FILES = 200
MAX_SCANNED_ENTRIES = 20_000
MAX_TABLES_PER_FILE = 50
MAX_COLUMNS = 100
MAX_ROWS_FOR_STATS = 200_000
# A CSV larger than this is profiled on its first MAX_ROWS_FOR_STATS rows (rows counted in chunks): a
# whole read of text columns takes ~10x the file's size in memory, more than a small sandbox has.
LIMITED_READ_BYTES = 16 << 20
# A workbook is a zip of XML; parsing ~64 MiB of sheet XML already takes the whole
# profile time limit, and a zip bomb of a few hundred KB inflates far beyond it.
MAX_WORKBOOK_INFLATED_BYTES = 64 << 20
# Room for the longest path the host sends (4 096 characters), repr-escaped.
MAX_LOAD_CODE_CHARS = 32 * 1024
STRUCTURE_SCAN_BYTES = 8 << 20
SKIPPED_DIRS = frozenset({'__pycache__', '.ipynb_checkpoints', '.git'})

CSV_EXTENSIONS = ('.csv', '.tsv', '.tab', '.txt', '.dat', '.psv')
EXCEL_EXTENSIONS = ('.xlsx', '.xlsm', '.xls', '.ods')
JSON_EXTENSIONS = ('.json', '.jsonl', '.ndjson', '.geojson')
TEXT_EXTENSIONS = ('.md', '.txt', '.log', '.rst', '.yaml', '.yml', '.xml', '.html', '.htm', '.py', '.sql', '.ini')


def profile_workspace(workdir: str, options: dict | None = None) -> dict:
    import pandas as pd  # noqa: F401  (fail early and clearly when pandas is missing)

    options = options or {}
    max_files = int(options.get('maxFiles') or MAX_FILES)
    paths, truncated, total = list_files(workdir, max_files)
    part_count = int(options.get('partCount') or 1)
    part = None
    if part_count > 1:
        part_index = int(options.get('partIndex') or 0)
        # What this kernel dealt from: the host merges parts only when every kernel saw the same listing.
        part = {'index': part_index, 'count': part_count, 'listing': listing_digest(workdir, paths)}
        paths = part_of(workdir, paths, part_index, part_count)
    files = []
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        for relative in paths:
            files.append(profile_file(workdir, relative))
    profile = {'files': files, 'truncated': truncated, 'totalFiles': total}
    if part is not None:
        profile['part'] = part
    return profile


def listing_digest(workdir: str, paths: list[str]) -> str:
    """SHA-256 of the listing a part was dealt from: each path with its size."""
    import hashlib

    digest = hashlib.sha256()
    for relative in paths:
        try:
            size = os.stat(os.path.join(workdir, relative), follow_symlinks=False).st_size
        except OSError:
            size = -1
        digest.update(('%s\t%d\n' % (relative, size)).encode('utf-8', 'surrogateescape'))
    return digest.hexdigest()


def part_of(workdir: str, paths: list[str], index: int, count: int) -> list[str]:
    """The files of part `index` of `count`, so that kernels profiling one part each finish at about the
    same time. Bytes of one format take about the same time to read, bytes of different formats do not
    (a workbook is slower per byte than a CSV, a SQLite file faster): the files of each format are dealt
    largest first to the part holding the fewest bytes of that format, then the fewest files. Every kernel
    deals the same listing the same way: the parts together are the whole listing, each file in one part."""
    def size(relative: str) -> int:
        try:
            return os.stat(os.path.join(workdir, relative), follow_symlinks=False).st_size
        except OSError:
            return 0

    def extension(relative: str) -> str:
        return os.path.splitext(relative)[1].lower()

    files_in_part = [0] * count
    bytes_in_part: dict[str, list[int]] = {}
    mine = []
    for relative in sorted(paths, key=lambda item: (extension(item), -size(item), item)):
        format_bytes = bytes_in_part.setdefault(extension(relative), [0] * count)
        part = min(range(count), key=lambda candidate: (format_bytes[candidate], files_in_part[candidate], candidate))
        format_bytes[part] += size(relative)
        files_in_part[part] += 1
        if part == index:
            mine.append(relative)
    return sorted(mine)


def list_files(workdir: str, max_files: int) -> tuple[list[str], bool, int]:
    """The first max_files files (sorted walk), whether some were left out, and how many files were seen."""
    found: list[str] = []
    total = 0
    stack = ['']
    seen = 0
    truncated = False
    while stack:
        relative = stack.pop()
        try:
            entries = sorted(os.scandir(os.path.join(workdir, relative) if relative else workdir), key=lambda e: e.name)
        except OSError:
            continue
        subdirs = []
        for entry in entries:
            seen += 1
            if seen > MAX_SCANNED_ENTRIES:
                return sorted(found), True, total
            path = relative + '/' + entry.name if relative else entry.name
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in SKIPPED_DIRS:
                    subdirs.append(path)
            elif entry.is_file(follow_symlinks=False):
                total += 1
                if len(found) >= max_files:
                    truncated = True
                    continue
                found.append(path)
        stack.extend(reversed(subdirs))
    return sorted(found), truncated, total


# ---------------------------------------------------------------------------
# One file


def profile_file(workdir: str, relative: str) -> dict:
    absolute = os.path.join(workdir, relative)
    result = {'path': relative, 'sizeBytes': 0, 'format': 'unsupported', 'tables': [], 'error': None, 'notes': []}
    try:
        result['sizeBytes'] = os.lstat(absolute).st_size
        with open(absolute, 'rb') as handle:
            head = handle.read(16)
        file_format = detect_format(relative, head)
        if head.startswith(OLE_MAGIC) and relative.lower().endswith(('.xlsx', '.xlsm')):
            raise UnreadableWorkbook(describe_ole_workbook(absolute))
        if file_format == 'text' and relative.lower().endswith('.txt') and looks_delimited(absolute):
            file_format = 'csv'
        result['format'] = file_format
        if file_format == 'csv':
            result['tables'] = [profile_csv(absolute, relative, result['notes'])]
        elif file_format == 'excel':
            try:
                result['tables'] = profile_excel(absolute, relative, result['notes'])
            except (zipfile.BadZipFile, ValueError) as error:
                if not isinstance(error, zipfile.BadZipFile) and 'format cannot be determined' not in str(error):
                    raise
                raise NotAWorkbook(not_a_workbook_reason(head)) from error
        elif file_format == 'json':
            result['tables'] = [profile_json(absolute, relative, result['notes'])]
        elif file_format == 'sqlite':
            result['tables'] = profile_sqlite(absolute, relative, result['notes'])
        elif file_format == 'parquet':
            result['tables'] = [profile_parquet(absolute, relative)]
        elif file_format == 'text':
            result['notes'].append(describe_text(absolute))
    except MemoryError:
        result['error'] = 'The file is too large to profile in the sandbox memory.'
    except Exception as error:  # one bad file must not stop the profile of the others
        result['error'] = describe_error(error)
    # Notes quote sheet names and such: bounded like every text the host gets.
    result['notes'] = [short_text(note, MAX_NOTE_CHARS) for note in result['notes']]
    return result


OLE_MAGIC = b'\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1'


class UnreadableWorkbook(ValueError):
    """An .xlsx that is not a zip: an encrypted workbook is an OLE container holding an EncryptedPackage."""


def describe_ole_workbook(absolute: str) -> str:
    with open(absolute, 'rb') as handle:
        data = handle.read(1 << 20)
    if 'EncryptedPackage'.encode('utf-16-le') in data or b'EncryptedPackage' in data:
        return 'the workbook is encrypted (password-protected); save it without a password to analyse it'
    return 'the file is an OLE container (an old .xls or an encrypted workbook), not an .xlsx zip'


def detect_format(relative: str, head: bytes) -> str:
    extension = os.path.splitext(relative)[1].lower()
    if head.startswith(b'SQLite format 3\x00'):
        return 'sqlite'
    if head.startswith(b'PAR1'):
        return 'parquet'
    if extension in EXCEL_EXTENSIONS:
        return 'excel'
    if head.startswith(b'PK\x03\x04') and extension in ('', '.xlsx'):
        return 'excel'
    if extension in JSON_EXTENSIONS:
        return 'json'
    if extension in CSV_EXTENSIONS and extension != '.txt':
        return 'csv'
    if extension == '.parquet':
        return 'parquet'
    if extension in ('.sqlite', '.sqlite3', '.db'):
        return 'sqlite'
    if extension in TEXT_EXTENSIONS:
        return 'text'
    return 'unsupported'


class WorkbookTooLarge(ValueError):
    """A workbook the profile will not open: its XML inflates past the cap."""


class NotAWorkbook(ValueError):
    """A file named as a workbook that is none: pandas says 'File is not a zip file' or asks for an engine."""


def not_a_workbook_reason(head: bytes) -> str:
    if head and all(byte in b'\t\n\r' or 32 <= byte < 127 or byte >= 128 for byte in head) and b'\0' not in head:
        return 'not an Excel workbook: the file holds text (a CSV or another text file named as a workbook?)'
    return ('not an Excel workbook: its bytes are not the zip archive an .xlsx is (damaged, cut short, '
            'or another kind of file renamed)')


class BrokenJson(ValueError):
    """Neither one JSON document nor JSON Lines: where the JSON parser stopped, for the reader."""


def describe_error(error: BaseException) -> str:
    text = str(error).strip().splitlines()[0] if str(error).strip() else ''
    if text and isinstance(error, (NotText, WorkbookTooLarge, NotAWorkbook, BrokenJson)):
        # Datalyst's own reasons are sentences for the reader: no exception class in front.
        return (text[0].upper() + text[1:])[:300]
    return ('%s: %s' % (type(error).__name__, text))[:300] if text else type(error).__name__


def describe_text(absolute: str) -> str:
    with open(absolute, 'rb') as handle:
        data = handle.read(STRUCTURE_SCAN_BYTES)
    lines = data.count(b'\n') + (0 if data.endswith(b'\n') or not data else 1)
    return 'A text file of %d %s.' % (lines, 'line' if lines == 1 else 'lines')


# ---------------------------------------------------------------------------
# CSV


def profile_csv(absolute: str, relative: str, notes: list[str]) -> dict:
    import pandas as pd

    size = os.path.getsize(absolute)
    if size == 0:
        raise EmptyFile('the file is empty (0 bytes)')
    with open(absolute, 'rb') as handle:
        data = handle.read(STRUCTURE_SCAN_BYTES)
    complete = len(data) >= size
    encoding = detect_encoding(data, complete)
    text = data.decode(encoding, errors='replace')
    if not complete:
        text = text[:text.rfind('\n') + 1] or text
    if not text.strip():
        raise EmptyFile('the file holds only blank lines')
    extension = os.path.splitext(relative)[1].lower()
    delimiter, width = sniff_delimiter(text[:SNIFF_BYTES])
    if extension in ('.tsv', '.tab') and width < 2:
        delimiter = '\t'
    structure = find_structure(text, delimiter, width, complete)
    rows = sample_rows(text, delimiter, structure)
    if not structure.has_header and structure.header_fields:
        rows = [structure.header_fields] + rows  # the "header" line is the first data row
    thousands, decimal = find_number_format(rows, delimiter)
    na_values = find_missing_markers(rows)

    kwargs: dict = {}
    if delimiter != ',':
        kwargs['sep'] = delimiter
    if encoding != 'utf-8':
        kwargs['encoding'] = encoding
    if structure.header_line > 0:
        kwargs['skiprows'] = structure.header_line
    if not structure.has_header:
        kwargs['header'] = None
        kwargs['names'] = ['column_%d' % (position + 1) for position in range(structure.width)]
    if structure.data_rows is not None:
        kwargs['nrows'] = structure.data_rows + (0 if structure.has_header else 1)
    if na_values:
        kwargs['na_values'] = na_values
    if thousands:
        kwargs['thousands'] = thousands
    if decimal:
        kwargs['decimal'] = decimal
    names = kwargs.get('names') or list(structure.header_fields)
    notes.extend(duplicate_names_notes([str(name).strip() for name in names]))
    if is_written_index(names, rows):
        kwargs['index_col'] = 0
        notes.append('The first column has no name and counts the rows from 0: the index pandas writes with the '
                     'data, read as the index, not as a column.')
    identifiers = find_identifier_columns(names, rows)
    if identifiers:
        kwargs['dtype'] = {name: 'str' for name in identifiers}
    dates = find_date_columns(names, rows)
    if dates:
        kwargs['parse_dates'] = [name for name, _ in dates]
        kwargs['date_format'] = {name: spec.format for name, spec in dates}

    if encoding not in ('utf-8', 'utf-8-sig'):
        notes.append('The file is not UTF-8: it was decoded as %s%s.' % (
            encoding, ' (no encoding fits; latin-1 reads any bytes, so some characters may be wrong)'
            if encoding == 'latin-1' else ''))
    if structure.header_line > 0:
        notes.append('%s of preamble above the header %s skipped.' % (lines_of(structure.header_line),
                                                                    'is' if structure.header_line == 1 else 'are'))
    if not structure.has_header:
        notes.append('No header row: the first line holds data, so every line is kept and the columns are named '
                     'column_1 to column_%d.' % structure.width)
    if identifiers:
        notes.append('Read as text, not numbers (identifiers: long digit strings or leading zeros): %s.'
                     % ', '.join(identifiers[:10]))
    for name, spec in dates:
        notes.append('Column %s holds dates written %s%s.' % (name, spec.label, spec.ambiguity))

    read_kwargs = dict(kwargs)
    limited = 'nrows' not in kwargs and size > LIMITED_READ_BYTES
    if limited:
        read_kwargs['nrows'] = MAX_ROWS_FOR_STATS
    try:
        frame = pd.read_csv(absolute, **read_kwargs)
    except pd.errors.ParserError:
        # A line with more fields than the header: keep every row, the extra fields in columns of their own.
        widened = widen_for_long_lines(text, delimiter, structure, kwargs, names)
        if widened is None:
            raise
        kwargs, long_lines, widest = widened
        read_kwargs = dict(kwargs, **({'nrows': MAX_ROWS_FOR_STATS} if limited else {}))
        frame = pd.read_csv(absolute, **read_kwargs)
        where = ', '.join('line %d' % line for line in long_lines[:5]) + (', …' if len(long_lines) > 5 else '')
        extra = kwargs['names'][len(names):widest]
        notes.append('%s %s more fields than the header (%s): every row is kept, and the extra fields are in %s %s.'
                     % (lines_of(len(long_lines)), 'holds' if len(long_lines) == 1 else 'hold', where,
                        'column' if len(extra) == 1 else 'columns', ', '.join(extra)))
    if not limited and has_totals_row(frame):
        kwargs['nrows'] = len(frame) - 1  # the rows as read (a header-less file's first line among them)
        note = totals_note(frame)
        notes.append(note[0].upper() + note[1:])
        frame = frame.iloc[:-1]
    # Said once the table is known: its rows are those kept (a totals row is no data row either).
    if structure.footer:
        notes.append('Lines below the %d data rows (a footer or notes) are left out.' % len(frame))
    elif structure.empty_tail:
        notes.append('Empty rows (delimiters only) below the %d data rows are left out.' % len(frame))
    rows_total = len(frame)
    if limited and len(frame) >= MAX_ROWS_FOR_STATS:
        rows_total = count_csv_rows(absolute, kwargs)
        notes.append('Column statistics come from the first %d rows.' % MAX_ROWS_FOR_STATS)
    trailing = [column for column in frame.columns if str(column).startswith('Unnamed: ') and frame[column].isna().all()]
    if trailing and frame.columns[-1] in trailing:
        notes.append('Every row ends with a delimiter, which adds an empty last column.')
    read = read_options(encoding=encoding, delimiter=delimiter,
                        header_row=structure.header_line if structure.has_header else None,
                        skip_rows=structure.header_line, decimal=decimal, thousands=thousands, na_values=na_values)
    return table_profile('', frame, rows_total, read, call_code('pd.read_csv', relative, kwargs), notes)


def is_written_index(names: list[str], rows: list[list[str]]) -> bool:
    """`DataFrame.to_csv` with its index: a first column with an empty header counting 0, 1, 2, …"""
    if len(names) < 2 or str(names[0]).strip() or len(rows) < 2:
        return False
    return all(len(row) > 0 and row[0].strip() == str(position) for position, row in enumerate(rows[:5000]))


TOTALS_LABEL = re.compile(r'^\s*(grand\s+)?(totals?|totale?s?|sum|summe|gesamt(summe)?|insgesamt|suma|somme)\b\s*:?',
                          re.IGNORECASE)


def has_totals_row(frame) -> bool:
    """The last row is the column totals of the rows above: its first text cell says Total (Sum, Gesamt, …)
    and most of its numbers, one not 0 at least, are the sums of their columns above it."""
    from pandas.api import types

    if len(frame) < 3:
        return False
    last = frame.iloc[-1]
    label = next((value for value in last.tolist() if isinstance(value, str) and value.strip()), None)
    if label is None or not TOTALS_LABEL.match(label):
        return False
    above = frame.iloc[:-1]
    numeric = [column for column in frame.columns if types.is_numeric_dtype(frame[column])
               and not types.is_bool_dtype(frame[column]) and not is_missing(last[column])]
    # Sums, not a label alone: most of the row's numbers (at least one that is not 0) are its column's sum.
    totals = {column: float(above[column].sum()) for column in numeric}
    sums = [column for column in numeric
            if abs(float(last[column]) - totals[column]) <= max(0.01, abs(totals[column]) * 0.001)]
    return any(float(last[column]) != 0 for column in sums) and 2 * len(sums) >= len(numeric)


def totals_note(frame) -> str:
    label = next(value for value in frame.iloc[-1].tolist() if isinstance(value, str) and value.strip())
    return 'the last row (%s) holds the totals of the rows above: left out, so it is not counted as data.' % (
        short_text(label.strip(), 40))


def lines_of(count: int) -> str:
    return '%d line%s' % (count, '' if count == 1 else 's')


class EmptyFile(ValueError):
    """A file with no bytes, or only blank lines: nothing to read."""


def widen_for_long_lines(text: str, delimiter: str, structure, kwargs: dict, names: list[str]):
    """Names for the widest line's fields, and the lines that are wider than the header (1-based)."""
    import csv
    import io

    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    long_lines, widest, line = [], len(names), 1
    try:
        for fields in reader:
            if line > structure.header_line + 1 and len(fields) > len(names):
                long_lines.append(line)
                widest = max(widest, len(fields))
            line = reader.line_num + 1
    except csv.Error:
        return None
    if not long_lines or widest > 4 * len(names) + 20:
        return None
    widened = dict(kwargs)
    taken = set(names)
    extra = []
    for position in range(len(names), widest):
        name = 'column_%d' % (position + 1)
        while name in taken:
            name += '_'
        extra.append(name)
    widened['names'] = list(names) + extra
    widened['header'] = None
    widened['skiprows'] = structure.header_line + (1 if structure.has_header else 0)
    return widened, long_lines, widest


DIGITS = re.compile(r'^\d+$')


def find_identifier_columns(names: list[str], rows: list[list[str]]) -> list[str]:
    """Columns of digit strings that a number would change: 16 or more digits (a float would round
    them) or a leading zero (`00501`). Read as text so nothing is lost."""
    found = []
    for position, name in enumerate(names):
        values = [row[position].strip() for row in rows[:5000] if position < len(row) and row[position].strip()]
        if not values or not all(DIGITS.match(value) for value in values):
            continue
        long_digits = max(len(value) for value in values) >= 16
        padded = any(len(value) > 1 and value.startswith('0') for value in values)
        # An *_id of short integers reads fine as a number (its kind says id); text would cost memory.
        if long_digits or padded:
            found.append(name)
    return found


class DateSpec:
    def __init__(self, format: str, label: str, ambiguity: str = '') -> None:
        self.format = format
        self.label = label
        self.ambiguity = ambiguity


# The year in four digits or two (25/12/23): without this, two-digit years were parsed value by value, some
# day first and some month first in one column.
SLASHED = re.compile(r'^(\d{1,2})/(\d{1,2})/(\d{4}|\d{2})( \d{1,2}:\d{2}(:\d{2})?)?$')
DOTTED = re.compile(r'^(\d{1,2})\.(\d{1,2})\.(\d{4}|\d{2})( \d{1,2}:\d{2}(:\d{2})?)?$')
# A year and month as one number (201306): a period, which a mean or an outlier fence of it would not be.
YEAR_MONTH = re.compile(r'^(19|20)\d\d(0[1-9]|1[0-2])$')


def find_date_columns(names: list[str], rows: list[list[str]]) -> list[tuple[str, DateSpec]]:
    """Columns of D/M/Y-style dates, with the one format that reads them all, and of year-months written
    YYYYMM (every value, at least three different ones, and not an id by its name). ISO dates need no help."""
    found = []
    for position, name in enumerate(names):
        values = [row[position].strip() for row in rows[:5000] if position < len(row) and row[position].strip()]
        if len(values) < 2:
            continue
        if all(YEAR_MONTH.match(value) for value in values) and len(set(values)) >= 3 and not ID_NAME.search(name):
            found.append((name, DateSpec('%Y%m', 'YYYYMM (a year and month)')))
            continue
        for pattern, separator in ((SLASHED, '/'), (DOTTED, '.')):
            matches = [pattern.match(value) for value in values]
            if not all(matches):
                continue
            times = {bool(match.group(4)) for match in matches}
            year_digits = {len(match.group(3)) for match in matches}
            if len(times) != 1 or len(year_digits) != 1:
                break
            year, year_label = ('%Y', 'YYYY') if year_digits == {4} else ('%y', 'YY')
            century = '' if year_digits == {4} else '; two-digit years are read as 1969 to 2068'
            seconds = any(match.group(5) for match in matches)
            clock = (' %H:%M:%S' if seconds else ' %H:%M') if times == {True} else ''
            clock_label = (' HH:MM:SS' if seconds else ' HH:MM') if clock else ''
            firsts = [int(match.group(1)) for match in matches]
            seconds_part = [int(match.group(2)) for match in matches]
            if max(firsts) > 12 and max(seconds_part) <= 12:
                day_first, ambiguity = True, ''
            elif max(seconds_part) > 12 and max(firsts) <= 12:
                day_first, ambiguity = False, ''
            elif max(firsts) > 12 or max(seconds_part) > 12:
                break  # neither reading fits every value
            else:
                day_first = separator == '.'
                ambiguity = ('; no day above 12 occurs, so day and month cannot be told apart: read as %s first'
                             ' (the usual order for this separator)' % ('day' if day_first else 'month'))
            fmt = ('%d{0}%m{0}{1}' if day_first else '%m{0}%d{0}{1}').format(separator, year) + clock
            label = ('DD{0}MM{0}{1}' if day_first else 'MM{0}DD{0}{1}').format(separator, year_label) + clock_label
            found.append((name, DateSpec(fmt, label, ambiguity + century)))
            break
    return found


def count_csv_rows(absolute: str, kwargs: dict) -> int:
    import pandas as pd

    total = 0
    chunk_kwargs = {key: value for key, value in kwargs.items() if key != 'nrows'}
    for chunk in pd.read_csv(absolute, usecols=[0], chunksize=200_000, **chunk_kwargs):
        total += len(chunk)
    return total


# ---------------------------------------------------------------------------
# Excel


def find_excel_header(raw) -> int:
    """The earliest widest row that is mostly text, among the first rows of a sheet read without a header."""
    best_row = 0
    best_width = 0
    for position in range(min(len(raw), HEADER_SEARCH_ROWS)):
        values = [value for value in raw.iloc[position].tolist() if not is_missing(value)]
        if not values:
            continue
        texts = [value for value in values if isinstance(value, str) and not looks_numeric(value)]
        if len(texts) / len(values) < 0.75:
            continue
        if len(values) > best_width:
            best_width = len(values)
            best_row = position
    return best_row


def banded_header(raw, header: int) -> list[str] | None:
    """The names of a header of two rows: group labels merged across columns (Q1 over Revenue and Units) above
    the header row, or a label merged down into it (Region). None when the row above is no such band."""
    if header < 1 or header >= len(raw):
        return None
    above, below = raw.iloc[header - 1].tolist(), raw.iloc[header].tolist()
    if sum(1 for value in above if isinstance(value, str) and value.strip()) < 2:
        return None  # a title, or nothing
    names: list[str] = []
    group = None
    widths: list[int] = []  # columns under each group label that has names below it
    for position, (top, bottom) in enumerate(zip(above, below)):
        top_text = top.strip() if isinstance(top, str) and top.strip() else None
        bottom_text = None if is_missing(bottom) else str(bottom).strip() or None
        if top_text is not None and bottom_text is not None:
            group, name = top_text, '%s %s' % (top_text, bottom_text)
            widths.append(1)
        elif top_text is not None:
            group, name = None, top_text  # merged down: a name of its own
        elif bottom_text is not None:
            if group is not None:
                widths[-1] += 1
            name = '%s %s' % (group, bottom_text) if group is not None else bottom_text
        else:
            group, name = None, 'Unnamed: %d' % position
        names.append(name)
    # A merged band: every label over names covers two columns or more (a 'Region | North' line of metadata
    # above a header does not), and the names can be told apart.
    if not widths or min(widths) < 2 or len(set(names)) != len(names):
        return None
    return names


def duplicate_names_notes(names: list[str]) -> list[str]:
    """pandas renames a repeated column name (value, value.1, value.2) without a word: said."""
    counts = collections.Counter(name for name in names if name)
    repeated = sorted(name for name, count in counts.items() if count > 1)
    renamed = ['%s.%d' % (name, copy) for name in repeated[:5] for copy in range(1, min(counts[name], 4))]
    return ['Columns share a name: %s; pandas reads the later ones as %s.' % (
        ', '.join(repeated[:5]), ', '.join(renamed))] if repeated else []


def check_workbook_size(absolute: str) -> None:
    """Refuses a zipped workbook (xlsx, xlsm, ods) whose members inflate past the cap.

    The sizes come from the zip directory, and zipfile never reads a member past its
    declared size, so a lying directory cannot get more bytes through."""
    if not zipfile.is_zipfile(absolute):
        return
    with zipfile.ZipFile(absolute) as archive:
        inflated = sum(member.file_size for member in archive.infolist())
    if inflated > MAX_WORKBOOK_INFLATED_BYTES:
        raise WorkbookTooLarge('the workbook inflates to %d MiB of XML (%d KiB on disk), more than the %d MiB the '
                         'profile reads; load it in a cell instead (e.g. openpyxl with read_only=True)'
                         % (inflated >> 20, os.path.getsize(absolute) >> 10, MAX_WORKBOOK_INFLATED_BYTES >> 20))


def profile_excel(absolute: str, relative: str, notes: list[str]) -> list[dict]:
    import pandas as pd

    check_workbook_size(absolute)
    tables = []
    with pd.ExcelFile(absolute) as workbook:
        sheets = list(workbook.sheet_names)
        if len(sheets) > MAX_TABLES_PER_FILE:
            notes.append('Only the first %d of %d sheets are profiled.' % (MAX_TABLES_PER_FILE, len(sheets)))
        hidden = [sheet.title for sheet in getattr(workbook.book, 'worksheets', [])
                  if getattr(sheet, 'sheet_state', 'visible') != 'visible']
        if hidden:
            notes.append('%s hidden in the workbook (profiled like the others): %s.' % (
                'A sheet is' if len(hidden) == 1 else '%d sheets are' % len(hidden), ', '.join(repr(name) for name in hidden[:10])))
        for sheet in sheets[:MAX_TABLES_PER_FILE]:
            raw = workbook.parse(sheet, header=None, nrows=HEADER_SEARCH_ROWS)
            if raw.empty:
                read = read_options(header_row=None, skip_rows=0, sheet=str(sheet))
                tables.append(table_profile(str(sheet), pd.DataFrame(), 0, read,
                                            call_code('pd.read_excel', relative, {'sheet_name': sheet})))
                continue
            header = find_excel_header(raw)
            kwargs: dict = {'sheet_name': sheet}
            if header > 0:
                kwargs['header'] = header
            banded = banded_header(raw, header)
            if banded is not None:
                kwargs['names'] = banded
                groups = [str(value).strip() for value in raw.iloc[header - 1].tolist() if isinstance(value, str)]
                notes.append('Sheet %r: a header of two rows: the labels of row %d (%s) are joined with those of row '
                             '%d (%s).' % (sheet, header, ', '.join(groups[:4]), header + 1,
                                           ', '.join(name for name in banded[:4])))
            elif header < len(raw):
                notes.extend('Sheet %r: %s' % (sheet, note) for note in duplicate_names_notes(
                    [str(value).strip() for value in raw.iloc[header].tolist() if not is_missing(value)]))
            # Text cells of digits a number would change (zips `01234`): pandas reads them as numbers.
            sample = workbook.parse(sheet, header=header, nrows=200, dtype=str,
                                    **({'names': banded} if banded is not None else {}))
            names = [str(column) for column in sample.columns]
            text_rows = sample.fillna('').astype(str).values.tolist()
            identifiers = set(find_identifier_columns(names, text_rows))
            if identifiers:
                # Only text labels: a date in a header cell has no literal the load code could name it by.
                kwargs['dtype'] = {column: 'str' for column, name in zip(sample.columns, names)
                                   if name in identifiers and isinstance(column, str)}
                notes.append('Sheet %r: read as text, not numbers (identifiers: long digit strings or leading '
                             'zeros): %s.' % (sheet, ', '.join(sorted(identifiers)[:10])))
            frame = workbook.parse(sheet, header=header, **{key: kwargs[key] for key in ('dtype', 'names') if key in kwargs})
            # A totals row at the end (below it, at most rows empty in every cell).
            filled = len(frame)
            while filled and frame.iloc[filled - 1].isna().all():
                filled -= 1
            if has_totals_row(frame.iloc[:filled]):
                notes.append('Sheet %r: %s' % (sheet, totals_note(frame.iloc[:filled])))
                kwargs['skipfooter'] = len(frame) - filled + 1
                frame = frame.iloc[:filled - 1]
            if banded is not None and header > 1:
                notes.append('Sheet %r: the header is rows %d and %d (rows above it are a title or notes).'
                             % (sheet, header, header + 1))
            elif header > 0 and banded is None:
                notes.append('Sheet %r: the header is row %d (rows above it are a title or notes).' % (sheet, header + 1))
            if any('\n' in str(column) for column in frame.columns):
                notes.append('Sheet %r: some header cells span several lines.' % sheet)
            read = read_options(header_row=header, skip_rows=header, sheet=str(sheet))
            tables.append(table_profile(str(sheet), frame, len(frame), read, call_code('pd.read_excel', relative, kwargs),
                                        notes))
    return tables


# ---------------------------------------------------------------------------
# JSON, SQLite, Parquet


def profile_json(absolute: str, relative: str, notes: list[str]) -> dict:
    import pandas as pd

    extension = os.path.splitext(relative)[1].lower()
    kwargs: dict = {}
    if extension in ('.jsonl', '.ndjson'):
        kwargs['lines'] = True
        frame = pd.read_json(absolute, lines=True)
    else:
        shaped = shaped_json(absolute, notes)
        if shaped is not None:
            frame = eval(shaped.format(path=repr(absolute)), {'pd': pd})
            return table_profile('', frame, len(frame), read_options(header_row=None, skip_rows=0),
                                 shaped.format(path=repr(relative)), notes)
        try:
            frame = pd.read_json(absolute)
        except ValueError:
            try:
                frame = pd.read_json(absolute, lines=True)
            except ValueError as error:
                raise BrokenJson(json_problem(absolute)) from error
            kwargs['lines'] = True
            notes.append('One JSON object per line.')
    return table_profile('', frame, len(frame), read_options(header_row=None, skip_rows=0),
                         call_code('pd.read_json', relative, kwargs), notes)


MAX_JSON_SHAPE_BYTES = 64 << 20


def json_problem(absolute: str) -> str:
    """Where the JSON parser stops reading the file (pandas' own message gives no place)."""
    try:
        with open(absolute, 'rb') as handle:
            json.loads(handle.read(MAX_JSON_SHAPE_BYTES).decode('utf-8', errors='replace'))
    except json.JSONDecodeError as error:
        return 'not valid JSON: %s at line %d, column %d' % (error.msg.lower(), error.lineno, error.colno)
    except ValueError:
        pass
    return 'not valid JSON, nor JSON Lines (one object per line)'


def shaped_json(absolute: str, notes: list[str]) -> str | None:
    """The load expression (with a `{path}` to fill) for JSON whose table pd.read_json does not find (None for
    the plain shapes): records wrapped in an object ({"meta": …, "data": [records]}), records with nested objects (flattened into
    columns `user.name`), an object of objects keyed by name ({"Norway": {"capital": …}}: a row each).
    The expression uses only pd, as every profile's load code does."""
    if os.path.getsize(absolute) > MAX_JSON_SHAPE_BYTES:
        return None
    try:
        with open(absolute, 'rb') as handle:
            document = json.load(handle)
    except (ValueError, UnicodeDecodeError):
        return None  # not one JSON document: JSON Lines, or broken
    if isinstance(document, list):
        records = [item for item in document[:1000] if isinstance(item, dict)]
        if records and len(records) == min(len(document), 1000) and any(
                isinstance(value, dict) for record in records for value in record.values()):
            notes.append('Nested objects are flattened into columns named by their path (like %s).'
                         % nested_example(records))
            return "pd.json_normalize(pd.read_json({path}, typ='series', convert_axes=False).tolist())"
        return None
    if not isinstance(document, dict) or not document:
        return None
    lists = {key: value for key, value in document.items()
             if isinstance(value, list) and value and all(isinstance(item, dict) for item in value[:1000])}
    if lists:
        key = max(lists, key=lambda name: len(lists[name]))
        others = [name for name in document if name != key]
        notes.append('The records are the %d under the key %s%s.' % (
            len(lists[key]), json.dumps(key, ensure_ascii=False),
            '' if not others else '; the other keys (%s) are left out' % ', '.join(
                json.dumps(name, ensure_ascii=False) for name in others[:5])))
        key_literal = repr(key).replace('{', '{{').replace('}', '}}')  # a literal inside the template
        return "pd.json_normalize(pd.read_json({path}, typ='series', convert_axes=False)[%s])" % key_literal
    values = list(document.values())
    inner = [set(value) for value in values if isinstance(value, dict)]
    # pandas' own to_json() writes {"column": {"0": …, "1": …}}: row numbers inside, columns outside.
    if len(values) >= 2 and len(inner) == len(values) and not all(
            str(name).isdigit() for keys in inner for name in keys) and len(set.intersection(*inner)) > 0:
        notes.append('An object of objects: each key (%s) is a row, named in the column key.'
                     % ', '.join(json.dumps(name, ensure_ascii=False) for name in list(document)[:3]))
        return "pd.read_json({path}, orient='index', convert_axes=False).rename_axis('key').reset_index()"
    return None


def nested_example(records: list[dict]) -> str:
    for record in records:
        for name, value in record.items():
            if isinstance(value, dict) and value:
                return '%s.%s' % (name, next(iter(value)))
    return 'a.b'


def profile_sqlite(absolute: str, relative: str, notes: list[str]) -> list[dict]:
    import pandas as pd

    # immutable=1: read without locks or journal files, never write.
    uri = 'file:%s?mode=ro&immutable=1' % urllib.parse.quote(absolute)
    connection = sqlite3.connect(uri, uri=True)
    try:
        names = [row[0] for row in connection.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' ORDER BY name")]
        if len(names) > MAX_TABLES_PER_FILE:
            notes.append('Only the first %d of %d tables are profiled.' % (MAX_TABLES_PER_FILE, len(names)))
        if names:
            notes.append('Each table loads with the code given for it (pd.read_sql_query over sqlite3).')
        tables = []
        for name in names[:MAX_TABLES_PER_FILE]:
            quoted = '"%s"' % name.replace('"', '""')
            rows = connection.execute('SELECT COUNT(*) FROM %s' % quoted).fetchone()[0]
            frame = pd.read_sql_query('SELECT * FROM %s LIMIT %d' % (quoted, MAX_ROWS_FOR_STATS), connection)
            code = 'pd.read_sql_query(%r, sqlite3.connect(%r))' % ('SELECT * FROM %s' % quoted, relative)
            read = read_options(header_row=None, skip_rows=0, table=name)
            tables.append(table_profile(name, frame, int(rows), read, code, notes))
        return tables
    finally:
        connection.close()


def profile_parquet(absolute: str, relative: str) -> dict:
    import pandas as pd

    try:
        frame = pd.read_parquet(absolute)
    except ImportError:
        raise RuntimeError('Reading Parquet needs pyarrow or fastparquet, which the runner image does not have.')
    return table_profile('', frame, len(frame), read_options(header_row=None, skip_rows=0),
                         call_code('pd.read_parquet', relative, {}))


# ---------------------------------------------------------------------------
# Tables and columns


def read_options(encoding=None, delimiter=None, header_row=0, skip_rows=0, sheet=None, table=None, decimal=None,
                 thousands=None, na_values=None) -> dict:
    return {
        'encoding': encoding,
        'delimiter': delimiter,
        'headerRow': header_row,
        'skipRows': skip_rows,
        'sheet': sheet,
        'table': table,
        'decimal': decimal,
        'thousands': thousands,
        'naValues': list(na_values or []),
    }


def call_code(function: str, relative: str, kwargs: dict) -> str:
    arguments = [repr(relative)] + ['%s=%r' % (key, value) for key, value in kwargs.items()]
    return '%s(%s)' % (function, ', '.join(arguments))


def table_profile(name: str, frame, rows: int, read: dict, load_code: str, notes: list[str] | None = None) -> dict:
    # Header cells and SQLite table names are the data's: a 5-million-character one is cut.
    columns = [profile_column(short_text(str(column), MAX_NAME_CHARS), frame.iloc[:, position])
               for position, column in enumerate(frame.columns[:MAX_COLUMNS])]
    if notes is not None:
        where = ('Sheet %r: ' % read['sheet'] if read.get('sheet') is not None
                 else 'Table %r: ' % read['table'] if read.get('table') is not None else '')
        for finder in (not_dates_notes, written_amounts_notes):
            try:
                notes.extend(where + note for note in finder(frame, columns))
            except Exception:  # a note is an extra: a column it cannot read must not fail the file
                pass
    for key in ('sheet', 'table'):
        if isinstance(read.get(key), str):
            read[key] = short_text(read[key], MAX_NAME_CHARS)
    return {
        'name': short_text(name, MAX_NAME_CHARS),
        'rows': int(rows),
        'columns': columns,
        'columnsTruncated': len(frame.columns) > MAX_COLUMNS,
        'read': read,
        'loadCode': clip_text(load_code, MAX_LOAD_CODE_CHARS),
        'statsRows': int(len(frame)),
        'duplicateRows': duplicate_rows(frame),
        'correlations': strong_correlations(frame, columns),
        'sampleRows': first_rows(frame),
    }


def not_dates_notes(frame, columns: list[dict]) -> list[str]:
    """A column of written dates with values that are no date ('not recorded', '2024-02-30'): said, as the
    words among numbers are, since the range and every date finding leave them out."""
    import pandas as pd

    found = []
    for position, column in enumerate(columns):
        series = frame.iloc[:, position]
        if column['kind'] != 'datetime' or series.dtype != object:
            continue
        present = series.dropna().map(str)  # map(str), not astype: a BLOB's bytes must not be decoded
        # One inferred format first (fast); only what it cannot read is tried value by value.
        failed = present[pd.to_datetime(present, errors='coerce').isna()]
        words = failed[pd.to_datetime(failed, errors='coerce', format='mixed').isna()] if len(failed) else failed
        if len(words):
            examples = ', '.join(repr(short_text(value, 20)) for value in pd.unique(words)[:3])
            found.append('Column %s holds dates and %d %s that %s not (%s): no date counts them.' % (
                column['name'], len(words),
                'value' if len(words) == 1 else 'values', 'is' if len(words) == 1 else 'are', examples))
    return found


# A number written with a currency or percent sign, or in accounting parentheses: `$1,234.00`, `12,5 %`, `(300)`.
# Linear on any text: a space inside the number only before a digit (no two ways to match a run of spaces).
WRITTEN_AMOUNT = re.compile(r'^\(?[-+]? ?(?:[$€£¥]|EUR|USD|GBP)? ?\d(?:[\d.,\u00a0\u202f\']| (?=\d))*'
                            r' ?(?:%|[$€£¥]|EUR|USD|GBP)?\)?$', re.IGNORECASE)
MAX_AMOUNT_CHARS = 40
AMOUNT_SIGN = re.compile(r'[%$€£¥()]|EUR|USD|GBP', re.IGNORECASE)


def written_amounts_notes(frame, columns: list[dict]) -> list[str]:
    """Text columns whose values are amounts with a sign pandas does not read: said, since no statistic
    counts them until they are converted."""
    import pandas as pd

    found = []
    for position, column in enumerate(columns):
        series = frame.iloc[:, position]
        # An id too: a money column whose values all differ is profiled as one.
        if column['kind'] not in ('category', 'text', 'id') or series.dtype != object:
            continue
        values = series.dropna().head(5000).map(str).str.strip()
        values = values[values != '']
        if (values.str.len() > MAX_AMOUNT_CHARS).any():
            continue
        if len(values) < 2 or not values.str.match(WRITTEN_AMOUNT).all() or not values.str.contains(AMOUNT_SIGN).any():
            continue
        examples = ', '.join(repr(short_text(value, 20)) for value in pd.unique(values)[:3])
        found.append('Column %s holds amounts written with a currency or percent sign or in parentheses (%s): '
                     'they are read as text, so no statistic counts them until they are converted.'
                     % (column['name'], examples))
    return found


# The first rows, as a person previewing a file sees them: each cell as short text (None when missing).
MAX_SAMPLE_ROWS = 5
MAX_SAMPLE_CELL_CHARS = 40
# 5 rows x 100 columns x 40 characters is up to 80 KB of UTF-8; rows past this budget are left out.
MAX_SAMPLE_ROWS_BYTES = 16 * 1024


def first_rows(frame) -> list[list[str | None]]:
    """The first MAX_SAMPLE_ROWS rows of the profiled columns, each cell clipped text, in at most 16 KiB of UTF-8."""
    rows: list[list[str | None]] = []
    used = 0
    # Column by column: a 2-d slice of a mixed-dtype frame costs ~50x more (tens of ms).
    columns = [frame.iloc[:MAX_SAMPLE_ROWS, position].tolist() for position in range(min(MAX_COLUMNS, frame.shape[1]))]
    for values in zip(*columns):
        row = [cell_text(value) for value in values]
        used += sum(len(cell.encode('utf-8')) for cell in row if cell is not None)
        if rows and used > MAX_SAMPLE_ROWS_BYTES:
            break
        rows.append(row)
    return rows


def cell_text(value) -> str | None:
    import pandas as pd

    try:
        if pd.isna(value) is True:  # an array-like cell (a JSON list) gives an array, not True
            return None
    except (TypeError, ValueError):
        pass
    return short_text(text_value(value), MAX_SAMPLE_CELL_CHARS)


MAX_CORRELATION_COLUMNS = 30
CORRELATION_SAMPLE_ROWS = 50_000
MIN_REPORTED_CORRELATION = 0.5
MAX_CORRELATIONS = 20


def duplicate_rows(frame) -> int | None:
    """Rows equal to an earlier row (of the rows the statistics come from); None when cells are unhashable."""
    try:
        return int(frame.duplicated().sum())
    except (TypeError, ValueError):
        return None


def strong_correlations(frame, columns: list[dict]) -> list[dict]:
    """Pearson correlations of at least 0.5 in size between measures (ids and flags left out), strongest first."""
    positions = [position for position, column in enumerate(columns)
                 if column['kind'] in ('number', 'integer') and (column['unique'] or 0) > 1][:MAX_CORRELATION_COLUMNS]
    if len(positions) < 2:
        return []
    sample = frame.iloc[:, positions]
    if len(sample) > CORRELATION_SAMPLE_ROWS:
        sample = sample.sample(CORRELATION_SAMPLE_ROWS, random_state=0)
    try:
        matrix = sample.astype('float64').corr().to_numpy()
    except (TypeError, ValueError):
        return []
    pairs = []
    for i in range(len(positions)):
        for j in range(i + 1, len(positions)):
            r = matrix[i, j]
            if r == r and abs(r) >= MIN_REPORTED_CORRELATION:
                pairs.append({'a': columns[positions[i]]['name'], 'b': columns[positions[j]]['name'],
                              'r': round(float(r), 3)})
    pairs.sort(key=lambda pair: -abs(pair['r']))
    return pairs[:MAX_CORRELATIONS]
