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

import csv
import io
import json
import math
import os
import re
import sqlite3
import sys
import urllib.parse
import warnings

MAX_FILES = 200
MAX_SCANNED_ENTRIES = 20_000
MAX_TABLES_PER_FILE = 50
MAX_COLUMNS = 100
MAX_SAMPLES = 3
MAX_SAMPLE_CHARS = 60
MAX_ROWS_FOR_STATS = 200_000
HEADER_SEARCH_ROWS = 40
STRUCTURE_SCAN_BYTES = 8 << 20
SNIFF_BYTES = 256 << 10
DELIMITERS = (',', ';', '\t', '|')
MISSING_MARKERS = ('.', '..', '-', '--', '?', 'n/a', 'N/A', 'n.a.', '#N/A', 'NULL', 'null', 'None')
SKIPPED_DIRS = frozenset({'__pycache__', '.ipynb_checkpoints', '.git'})

CSV_EXTENSIONS = ('.csv', '.tsv', '.tab', '.txt', '.dat', '.psv')
EXCEL_EXTENSIONS = ('.xlsx', '.xlsm', '.xls', '.ods')
JSON_EXTENSIONS = ('.json', '.jsonl', '.ndjson', '.geojson')
TEXT_EXTENSIONS = ('.md', '.txt', '.log', '.rst', '.yaml', '.yml', '.xml', '.html', '.htm', '.py', '.sql', '.ini')


def profile_workspace(workdir: str, options: dict | None = None) -> dict:
    import pandas as pd  # noqa: F401  (fail early and clearly when pandas is missing)

    options = options or {}
    max_files = int(options.get('maxFiles') or MAX_FILES)
    paths, truncated = list_files(workdir, max_files)
    files = []
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        for relative in paths:
            files.append(profile_file(workdir, relative))
    return {'files': files, 'truncated': truncated}


def list_files(workdir: str, max_files: int) -> tuple[list[str], bool]:
    found: list[str] = []
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
                return sorted(found), True
            path = relative + '/' + entry.name if relative else entry.name
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in SKIPPED_DIRS:
                    subdirs.append(path)
            elif entry.is_file(follow_symlinks=False):
                if len(found) >= max_files:
                    truncated = True
                    continue
                found.append(path)
        stack.extend(reversed(subdirs))
    return sorted(found), truncated


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
        if file_format == 'text' and relative.lower().endswith('.txt') and looks_delimited(absolute):
            file_format = 'csv'
        result['format'] = file_format
        if file_format == 'csv':
            result['tables'] = [profile_csv(absolute, relative, result['notes'])]
        elif file_format == 'excel':
            result['tables'] = profile_excel(absolute, relative, result['notes'])
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
    return result


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


def looks_delimited(absolute: str) -> bool:
    """A .txt file that is really a table: most lines split into the same number (>1) of fields."""
    with open(absolute, 'rb') as handle:
        data = handle.read(SNIFF_BYTES)
    text = data.decode(detect_encoding(data, complete=False), errors='replace')
    lines = [line for line in text.splitlines()[:200] if line.strip()]
    if len(lines) < 2:
        return False
    delimiter, width = sniff_delimiter('\n'.join(lines))
    if width < 2:
        return False
    rows = list(csv.reader(io.StringIO('\n'.join(lines)), delimiter=delimiter))
    return sum(1 for row in rows if len(row) == width) >= 0.8 * len(rows)


def describe_error(error: BaseException) -> str:
    text = str(error).strip().splitlines()[0] if str(error).strip() else ''
    return ('%s: %s' % (type(error).__name__, text))[:300] if text else type(error).__name__


def describe_text(absolute: str) -> str:
    with open(absolute, 'rb') as handle:
        data = handle.read(STRUCTURE_SCAN_BYTES)
    return 'A text file of %d lines.' % (data.count(b'\n') + (0 if data.endswith(b'\n') or not data else 1))


# ---------------------------------------------------------------------------
# CSV


def detect_encoding(data: bytes, complete: bool) -> str:
    if data.startswith(b'\xef\xbb\xbf'):
        return 'utf-8-sig'
    if data.startswith((b'\xff\xfe', b'\xfe\xff')):
        return 'utf-16'
    try:
        data.decode('utf-8')
        return 'utf-8'
    except UnicodeDecodeError as error:
        # A multi-byte character cut by the end of a partial read is not evidence.
        if not complete and error.start >= len(data) - 3 and error.reason == 'unexpected end of data':
            return 'utf-8'
    if any(0x80 <= byte <= 0x9f for byte in data):
        try:
            data.decode('cp1252')
            return 'cp1252'
        except UnicodeDecodeError:
            pass
    return 'latin-1'


def sniff_delimiter(text: str) -> tuple[str, int]:
    """The delimiter giving the most rows with one same field count (>1), and that count."""
    best = (',', 1)
    best_score = (0.0, 0)
    for delimiter in DELIMITERS:
        counts: dict[int, int] = {}
        try:
            rows = list(csv.reader(io.StringIO(text), delimiter=delimiter))[:200]
        except csv.Error:
            continue
        rows = [row for row in rows if row]
        if not rows:
            continue
        for row in rows:
            counts[len(row)] = counts.get(len(row), 0) + 1
        width, frequency = max(counts.items(), key=lambda item: (item[1], item[0]))
        if width < 2:
            continue
        score = (frequency / len(rows), width)
        if score > best_score:
            best_score = score
            best = (delimiter, width)
    return best


class CsvStructure:
    """Where the header and the data are, in raw line numbers."""

    def __init__(self) -> None:
        self.header_line = 0
        self.data_rows: int | None = None
        self.footer = False
        self.width = 1


def find_structure(text: str, delimiter: str, width: int, complete: bool) -> CsvStructure:
    structure = CsvStructure()
    structure.width = width
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    records = []  # (first raw line, fields)
    line = 0
    try:
        for fields in reader:
            records.append((line, fields))
            line = reader.line_num
    except csv.Error:
        pass
    if width < 2:
        return structure
    # The header: the first record with the table's field count that is not all empty.
    header_index = None
    for index, (_, fields) in enumerate(records[:HEADER_SEARCH_ROWS * 4]):
        if len(fields) == width and any(field.strip() for field in fields):
            header_index = index
            break
    if header_index is None:
        return structure
    structure.header_line = records[header_index][0]
    # The data: records after the header until one that is clearly not a row of the table.
    data_rows = 0
    end = None
    for index in range(header_index + 1, len(records)):
        fields = records[index][1]
        if not fields or not any(field.strip() for field in fields) and len(fields) <= 1:
            continue  # blank line (pandas skips those)
        if len(fields) <= max(1, width // 2):
            end = index
            break
        data_rows += 1
    if end is not None and complete:
        trailing = [fields for _, fields in records[end:] if any(field.strip() for field in fields)]
        if trailing:
            structure.footer = True
            structure.data_rows = data_rows
    return structure


THOUSANDS_DOT = re.compile(r'^-?\d{1,3}(\.\d{3})+$')
DECIMAL_COMMA = re.compile(r'^-?\d{1,3}(\.\d{3})*,\d+$|^-?\d+,\d+$')
PLAIN_DECIMAL_DOT = re.compile(r'^-?\d+\.(\d{1,2}|\d{4,})$')
THOUSANDS_COMMA = re.compile(r'^-?\d{1,3}(,\d{3})+(\.\d+)?$')


def find_number_format(rows: list[list[str]], delimiter: str) -> tuple[str | None, str | None]:
    """Thousands separator and decimal mark, from the cells' own evidence."""
    dot_groups = decimal_comma = plain_dot = comma_groups = 0
    for row in rows:
        for cell in row:
            value = cell.strip()
            if not value or len(value) > 30:
                continue
            if THOUSANDS_DOT.match(value):
                dot_groups += 1
            elif PLAIN_DECIMAL_DOT.match(value):
                plain_dot += 1
            if delimiter == ',':
                # A comma inside a quoted number of a comma-separated file groups thousands.
                if THOUSANDS_COMMA.match(value):
                    comma_groups += 1
            elif DECIMAL_COMMA.match(value):
                decimal_comma += 1
    if delimiter != ',' and (dot_groups or decimal_comma) and not plain_dot:
        return ('.' if dot_groups else None), (',' if decimal_comma else None)
    if delimiter == ',' and comma_groups:
        return ',', None
    return None, None


def find_missing_markers(rows: list[list[str]]) -> list[str]:
    """Markers used for missing values: '.', '-', … and cells of only (no-break) spaces."""
    found: list[str] = []
    markers = set(MISSING_MARKERS)
    for row in rows:
        for cell in row:
            if cell in found or cell == '':
                continue
            if cell.strip() == '' and len(found) < 8:  # str.strip() removes NBSP too
                found.append(cell)
            elif cell.strip() in markers and cell.strip() not in ('NULL', 'null', 'None', 'n/a', 'N/A', '#N/A'):
                # pandas already treats NULL, null, None, n/a, N/A and #N/A as missing.
                found.append(cell)
    return sorted(found, key=lambda marker: (marker.strip() == '', marker))


def profile_csv(absolute: str, relative: str, notes: list[str]) -> dict:
    import pandas as pd

    size = os.path.getsize(absolute)
    with open(absolute, 'rb') as handle:
        data = handle.read(STRUCTURE_SCAN_BYTES)
    complete = len(data) >= size
    encoding = detect_encoding(data, complete)
    text = data.decode(encoding, errors='replace')
    if not complete:
        text = text[:text.rfind('\n') + 1] or text
    extension = os.path.splitext(relative)[1].lower()
    delimiter, width = sniff_delimiter(text[:SNIFF_BYTES])
    if extension in ('.tsv', '.tab') and width < 2:
        delimiter = '\t'
    structure = find_structure(text, delimiter, width, complete)
    rows = sample_rows(text, delimiter, structure)
    thousands, decimal = find_number_format(rows, delimiter)
    na_values = find_missing_markers(rows)

    kwargs: dict = {}
    if delimiter != ',':
        kwargs['sep'] = delimiter
    if encoding != 'utf-8':
        kwargs['encoding'] = encoding
    if structure.header_line > 0:
        kwargs['skiprows'] = structure.header_line
    if structure.footer and structure.data_rows is not None:
        kwargs['nrows'] = structure.data_rows
    if na_values:
        kwargs['na_values'] = na_values
    if thousands:
        kwargs['thousands'] = thousands
    if decimal:
        kwargs['decimal'] = decimal

    if structure.header_line > 0:
        notes.append('%d line(s) of preamble above the header are skipped.' % structure.header_line)
    if structure.footer:
        notes.append('Lines below the %d data rows (a footer or notes) are left out.' % (structure.data_rows or 0))
    if encoding not in ('utf-8', 'utf-8-sig'):
        notes.append('The file is not UTF-8; it reads as %s.' % encoding)

    read_kwargs = dict(kwargs)
    limited = 'nrows' not in kwargs and size > 64 << 20
    if limited:
        read_kwargs['nrows'] = MAX_ROWS_FOR_STATS
    frame = pd.read_csv(absolute, **read_kwargs)
    rows_total = len(frame)
    if limited and len(frame) >= MAX_ROWS_FOR_STATS:
        rows_total = count_csv_rows(absolute, kwargs)
        notes.append('Column statistics come from the first %d rows.' % MAX_ROWS_FOR_STATS)
    trailing = [column for column in frame.columns if str(column).startswith('Unnamed: ') and frame[column].isna().all()]
    if trailing and frame.columns[-1] in trailing:
        notes.append('Every row ends with a delimiter, which adds an empty last column.')
    read = read_options(encoding=encoding, delimiter=delimiter, header_row=structure.header_line,
                        skip_rows=structure.header_line, decimal=decimal, thousands=thousands, na_values=na_values)
    return table_profile('', frame, rows_total, read, call_code('pd.read_csv', relative, kwargs))


def sample_rows(text: str, delimiter: str, structure: CsvStructure) -> list[list[str]]:
    lines = text.splitlines(True)[structure.header_line + 1:]
    if structure.data_rows is not None:
        lines = lines[:structure.data_rows + 200]
    rows = []
    try:
        for row in csv.reader(io.StringIO(''.join(lines[:5000])), delimiter=delimiter):
            rows.append(row)
    except csv.Error:
        pass
    return rows[:structure.data_rows] if structure.data_rows is not None else rows


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


def profile_excel(absolute: str, relative: str, notes: list[str]) -> list[dict]:
    import pandas as pd

    tables = []
    with pd.ExcelFile(absolute) as workbook:
        sheets = list(workbook.sheet_names)
        if len(sheets) > MAX_TABLES_PER_FILE:
            notes.append('Only the first %d of %d sheets are profiled.' % (MAX_TABLES_PER_FILE, len(sheets)))
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
            frame = workbook.parse(sheet, header=header)
            if header > 0:
                notes.append('Sheet %r: the header is row %d (rows above it are a title or notes).' % (sheet, header + 1))
            if any('\n' in str(column) for column in frame.columns):
                notes.append('Sheet %r: some header cells span several lines.' % sheet)
            read = read_options(header_row=header, skip_rows=header, sheet=str(sheet))
            tables.append(table_profile(str(sheet), frame, len(frame), read, call_code('pd.read_excel', relative, kwargs)))
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
        try:
            frame = pd.read_json(absolute)
        except ValueError:
            frame = pd.read_json(absolute, lines=True)
            kwargs['lines'] = True
            notes.append('One JSON object per line.')
    return table_profile('', frame, len(frame), read_options(header_row=None, skip_rows=0),
                         call_code('pd.read_json', relative, kwargs))


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
            notes.append('Load a table with `import sqlite3` and the loadCode of the table.')
        tables = []
        for name in names[:MAX_TABLES_PER_FILE]:
            quoted = '"%s"' % name.replace('"', '""')
            rows = connection.execute('SELECT COUNT(*) FROM %s' % quoted).fetchone()[0]
            frame = pd.read_sql_query('SELECT * FROM %s LIMIT %d' % (quoted, MAX_ROWS_FOR_STATS), connection)
            code = 'pd.read_sql_query(%r, sqlite3.connect(%r))' % ('SELECT * FROM %s' % quoted, relative)
            read = read_options(header_row=None, skip_rows=0, table=name)
            tables.append(table_profile(name, frame, int(rows), read, code))
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


def table_profile(name: str, frame, rows: int, read: dict, load_code: str) -> dict:
    columns = [profile_column(str(column), frame.iloc[:, position])
               for position, column in enumerate(frame.columns[:MAX_COLUMNS])]
    return {
        'name': name,
        'rows': int(rows),
        'columns': columns,
        'columnsTruncated': len(frame.columns) > MAX_COLUMNS,
        'read': read,
        'loadCode': load_code,
    }


ID_NAME = re.compile(r'(^|[_\s])(id|key|code|uuid)$|^id[_\s]|Id$|ID$', re.IGNORECASE)


def profile_column(name: str, series) -> dict:
    import pandas as pd
    from pandas.api import types

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
    return {
        'name': name,
        'dtype': str(series.dtype),
        'kind': kind,
        'missing': missing,
        'unique': unique,
        'samples': samples,
        'min': minimum,
        'max': maximum,
    }


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
        if integral and unique == len(present) and ID_NAME.search(name) and len(present) > 1:
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
    # Every value different: an identifier, when the name says so or the values are short codes.
    if unique == len(present) and (ID_NAME.search(name) and len(present) > 1 or len(present) >= 10
                                   and strings.str.len().max() <= 40 and not strings.str.contains(r'\s').any()):
        return 'id'
    if unique <= max(20, int(len(present) * 0.05)) and strings.str.len().mean() <= 60:
        return 'category'
    return 'text'


DATE_LIKE = re.compile(r'^\d{4}-\d{1,2}-\d{1,2}([ T]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?)?$|^\d{1,2}[./-]\d{1,2}[./-]\d{2,4}$')


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
