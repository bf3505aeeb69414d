"""How a delimited text file is written: encoding, delimiter, where the header
and the data are, the thousands separator and decimal mark, missing-value
markers. Standard library only; the evidence is the file's own bytes.
"""

from __future__ import annotations

import csv
import io
import re

SNIFF_BYTES = 256 << 10
HEADER_SEARCH_ROWS = 40
DELIMITERS = (',', ';', '\t', '|')
MISSING_MARKERS = ('.', '..', '-', '--', '?', 'n/a', 'N/A', 'n.a.', '#N/A', 'NULL', 'null', 'None')

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
            # A marker is short (it lands in loadCode and the profile).
            if cell in found or cell == '' or len(cell) > 32:
                continue
            if cell.strip() == '' and len(found) < 8:  # str.strip() removes NBSP too
                found.append(cell)
            elif cell.strip() in markers and cell.strip() not in ('NULL', 'null', 'None', 'n/a', 'N/A', '#N/A'):
                # pandas already treats NULL, null, None, n/a, N/A and #N/A as missing.
                found.append(cell)
    return sorted(found, key=lambda marker: (marker.strip() == '', marker))


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
