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

class NotText(ValueError):
    """The bytes are not text in any encoding: a binary file with a text extension."""


def detect_encoding(data: bytes, complete: bool) -> str:
    """The file's encoding: a BOM, else UTF-8 when it decodes, else what charset_normalizer finds.

    charset_normalizer (Debian's python3-charset-normalizer) tells CJK legacy
    encodings (Big5, GBK, Shift_JIS, EUC-KR), cp1252 and UTF-16 without a BOM
    apart; latin-1 is the last resort, and the profile says so."""
    if data.startswith(b'\xef\xbb\xbf'):
        return 'utf-8-sig'
    if data.startswith((b'\xff\xfe', b'\xfe\xff')):
        return 'utf-16'
    try:
        data.decode('utf-8')
        if b'\x00' not in data:
            return 'utf-8'
    except UnicodeDecodeError as error:
        # A multi-byte character cut by the end of a partial read is not evidence.
        if not complete and error.start >= len(data) - 3 and error.reason == 'unexpected end of data' \
                and b'\x00' not in data:
            return 'utf-8'
    detected = detect_with_charset_normalizer(data)
    if detected is not None:
        return detected
    if b'\x00' in data:
        raise NotText('binary data, not text (it holds NUL bytes and decodes in no text encoding)')
    if any(0x80 <= byte <= 0x9f for byte in data):
        try:
            data.decode('cp1252')
            return 'cp1252'
        except UnicodeDecodeError:
            pass
    return 'latin-1'


# Encodings that are text a person would write a table in; a detector's other
# guesses on binary data (e.g. 'utf_32', 'cp037') are not trusted.
TRUSTED_ENCODINGS = frozenset({
    'utf_16', 'utf_16_le', 'utf_16_be', 'big5', 'big5hkscs', 'cp950', 'gb2312', 'gbk', 'gb18030', 'hz',
    'shift_jis', 'cp932', 'euc_jp', 'iso2022_jp', 'euc_kr', 'cp949', 'iso2022_kr', 'johab', 'cp1250', 'cp1251',
    'cp1252', 'cp1253', 'cp1254', 'cp1255', 'cp1256', 'cp1257', 'cp1258', 'latin_1', 'iso8859_2', 'iso8859_5',
    'iso8859_7', 'iso8859_9', 'iso8859_15', 'koi8_r', 'koi8_u', 'mac_roman', 'cp437', 'cp850', 'cp866', 'tis_620',
    'ascii', 'utf_8',
})
DETECTOR_BYTES = 256 << 10


def detect_with_charset_normalizer(data: bytes) -> str | None:
    try:
        from charset_normalizer import from_bytes
    except ImportError:  # an image without it: the older rules below still apply
        return None
    sample = data[:DETECTOR_BYTES]
    if len(data) > DETECTOR_BYTES:  # do not cut a multi-byte character (UTF-16 pairs, CJK double bytes)
        cut = sample.rfind(b'\n')
        if cut > 0:
            sample = sample[:cut + 1]
    results = from_bytes(sample)
    best = results.best()
    if best is None:
        return None
    # cp1250 and cp1252 often tie on Western text (è reads as č); on a tie the far commoner cp1252 wins.
    tied = [match for match in results if (match.chaos, match.coherence) == (best.chaos, best.coherence)]
    best = next((match for match in tied if match.encoding == 'cp1252'), best)
    encoding = best.encoding
    if encoding not in TRUSTED_ENCODINGS:
        return None
    if b'\x00' in sample and not encoding.startswith('utf_16'):
        return None
    if encoding in ('ascii', 'utf_8'):
        return 'utf-8'
    if encoding == 'latin_1':
        return 'latin-1'
    return encoding.replace('_', '-')


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
        # Rows of delimiters only at the end, with no text below them: left out like a footer, said apart.
        self.empty_tail = False
        self.width = 1
        # False when the first row is data (a header-less file): the columns get generated names.
        self.has_header = True
        self.header_fields: list[str] = []


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
    # The header: the first record with the table's field count that is mostly filled in. A title
    # or units line pasted from a sheet has the full count too (trailing delimiters), but one cell.
    head = records[:HEADER_SEARCH_ROWS * 4]
    fill = [sum(1 for field in fields if field.strip()) if len(fields) == width else 0 for _, fields in head]
    most = max(fill, default=0)
    header_index = None
    for index, filled in enumerate(fill):
        if filled and filled >= max(1, min(most, (width + 1) // 2)):
            header_index = index
            break
    if header_index is None:
        return structure
    structure.header_line = records[header_index][0]
    below = [fields for _, fields in records[header_index + 1:header_index + 201] if len(fields) == width]
    structure.has_header = is_header_row(records[header_index][1], below, preamble=header_index > 0)
    structure.header_fields = list(records[header_index][1])
    # The data: records after the header until one that is clearly not a row of the table: a short record,
    # or (when the sample is the whole file) a row of delimiters only below which every record holds at
    # most one value, as a sheet saved as CSV writes an empty row and then its source note in column A.
    # Or, below a blank line, a note that says what it is ("Source: internal ledger, 2024"), at any width.
    notes_from = first_of_notes(records, header_index + 1) if complete and width >= 3 else len(records)
    data_rows = 0
    empty_rows = 0  # rows of delimiters only: data when a row follows them, else the gap above a footer
    after_gap = False
    end = None
    for index in range(header_index + 1, len(records)):
        fields = records[index][1]
        if not fields or not any(field.strip() for field in fields) and len(fields) <= 1:
            after_gap = True
            continue  # blank line (pandas skips those)
        empty = not any(field.strip() for field in fields)
        if (len(fields) <= max(1, width // 2) or (index >= notes_from and empty)
                or (after_gap and complete and is_note_line(fields))):
            end = index
            break
        if empty:
            empty_rows += 1
            after_gap = True
            continue
        data_rows += empty_rows + 1
        empty_rows = 0
        after_gap = False
    if end is not None and complete:
        trailing = [fields for _, fields in records[end:] if any(field.strip() for field in fields)]
        structure.footer = bool(trailing)
        structure.empty_tail = not trailing
        structure.data_rows = data_rows
    elif complete and empty_rows:
        structure.empty_tail = True
        structure.data_rows = data_rows
    return structure


NOTE_LINE = re.compile(r'^\s*(sources?|fuentes?|quellen?|notes?|notas?|anmerkungen?|hinweise?|remarques?|footnotes?)\b',
                       re.IGNORECASE)


def is_note_line(fields: list[str]) -> bool:
    """A line that names itself a source or a note, written as one: "Source: …", or a long "Note …"."""
    first = next((field.strip() for field in fields if field.strip()), '')
    return bool(NOTE_LINE.match(first)) and (':' in first or len(first) > 30)


def first_of_notes(records: list[tuple[int, list[str]]], start: int) -> int:
    """Where the file's last run of records holding at most one value each, and that not a number, begins
    (len(records) if none): text below a table, not sparse rows of it."""
    index = len(records)
    while index > start:
        filled = [field for field in records[index - 1][1] if field.strip()]
        if len(filled) > 1 or (filled and is_number_cell(filled[0])):
            break
        index -= 1
    return index


NUMBER = re.compile(r'^[-+]?(\d+([.,]\d+)*|\d*[.,]\d+)([eE][-+]?\d+)?%?$')
YEAR = re.compile(r'^(1[89]|20)\d\d$')
NULL_WORDS = frozenset({'', 'null', 'none', 'nan', 'na', 'n/a', '-', '.', '?'})


def is_number_cell(value: str) -> bool:
    return bool(NUMBER.match(value.strip().replace(' ', '')))


def is_header_row(row: list[str], below: list[list[str]], preamble: bool) -> bool:
    """Whether the first full row names the columns or is already data.

    A row with a word where the rows below hold numbers is a header. A row of
    only numbers (and missing markers) is data, so the file has no header,
    unless it is a run of years under a label (`Year,2000,2001,…`) or a
    title/units preamble stands above it: a sheet pasted as CSV."""
    cells = [cell.strip() for cell in row]
    filled = [cell for cell in cells if cell.lower() not in NULL_WORDS]
    if not filled:
        return True
    words = [cell for cell in filled if not is_number_cell(cell)]
    numbers = [cell for cell in filled if is_number_cell(cell) and not YEAR.match(cell)]
    if words and not (numbers and below and types_match(cells, below)):
        return True
    if words:
        return False  # `Oslo,12,3` above `Lima,40,5`: words and numbers just where the data has them
    if preamble:
        return True
    years = [cell for cell in cells if YEAR.match(cell)]
    if len(years) >= 2 and len(set(years)) == len(years) and len(years) >= len(filled) - 1:
        return True
    return False


def types_match(cells: list[str], below: list[list[str]]) -> bool:
    """Every filled cell is a number where most values below are numbers, and a word where they are words."""
    for position, cell in enumerate(cells):
        if cell.lower() in NULL_WORDS:
            continue
        column = [row[position].strip() for row in below if position < len(row) and row[position].strip().lower() not in NULL_WORDS]
        if not column:
            return False
        numeric_share = sum(1 for value in column if is_number_cell(value)) / len(column)
        if is_number_cell(cell) != (numeric_share >= 0.5):
            return False
    return True


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
