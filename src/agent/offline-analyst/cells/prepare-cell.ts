import { stageHeader } from '../stages.ts';

/**
 * Tidy steps for tables read from messy files (a header row below a title,
 * numbers written as text with thousands separators, cells holding only
 * spaces or a missing-value marker). Defined once; the load cells apply them.
 */
/** `recovering`: after a restart; its note must not read as a restart itself (see conversation.ts). */
export function prepareCell(maxRows: number, recovering = false): string {
  const recoveryLine = recovering
    ? `recovery_note = 'The tables were gone after a kernel restart (most likely out of memory), so they were reloaded with less memory: large files in smaller chunks, each table studied on a sample of at most ${maxRows} rows.'\nprint(recovery_note)\n`
    : 'recovery_note = None\n';
  return String.raw`${stageHeader('prepare')}
${recoveryLine}MAX_ROWS = ${maxRows}
MISSING_MARKERS = {'', '.', '-', '--', '…', '...', 'NA', 'N/A', 'n/a', 'NaN', 'nan', 'null', 'NULL', 'None'}
tables, duplicates, problems, focus = {}, {}, {}, []

def promote_header(frame):
    """Most columns unnamed (a title above the header): use the row with the most text cells."""
    names = list(frame.columns)
    unnamed = sum(isinstance(name, (int, np.integer)) or str(name).startswith('Unnamed') for name in names)
    if unnamed <= len(names) / 2:
        return frame
    head = frame.head(15)
    text_cells = head.apply(lambda row: sum(isinstance(v, str) and v.strip() != '' for v in row), axis=1).to_numpy()
    if len(text_cells) == 0 or text_cells.max() < 2:
        return frame
    position = int(text_cells.argmax())
    row = head.iloc[position]
    frame = frame.iloc[position + 1 :].copy()
    frame.columns = [v if isinstance(v, str) and v.strip() else names[i] for i, v in enumerate(row)]
    return frame

def clean_names(frame):
    seen, names = {}, []
    for position, column in enumerate(frame.columns):
        name = re.sub(r'\s+', ' ', str(column)).strip()
        name = f'column_{position + 1}' if not name or name.startswith('Unnamed:') else name
        seen[name] = seen.get(name, 0) + 1
        names.append(name if seen[name] == 1 else f'{name}_{seen[name]}')
    frame.columns = names
    return frame

ID_NAME = re.compile(r'(^|[_\s])(id|key|code|uuid|zip|postcode|phone)$|Id$|ID$', re.IGNORECASE)

def looks_like_codes(name, text):
    """Digit strings that are identifiers: 16+ digits (a float would round them), a leading zero, an *_id name."""
    present = text.dropna()
    if present.empty or not present.str.fullmatch(r'\d+').all():
        return False
    return bool(ID_NAME.search(str(name)) or present.str.len().max() >= 16
                or (present.str.len().gt(1) & present.str.startswith('0')).any())

def coerce_text(series, notes=None, words_out=None):
    """Text that holds numbers ('229,932.50', German '1.613'), ISO dates, or missing markers ('.', a lone NBSP).

    A mostly numeric column with a few words ('TIE', 'Not Available', '300368560z') becomes numbers only with
    a note that says how many values are not numbers and shows them; identifiers stay text."""
    text = series.astype('string').str.replace('\u00a0', ' ', regex=False).str.strip()
    text = text.mask(text.isin(MISSING_MARKERS))
    present = int(text.notna().sum())
    if present == 0:
        return pd.Series(np.nan, index=series.index, dtype=object)
    if ID_NAME.search(str(series.name)) or looks_like_codes(series.name, text):
        return text.astype(object).where(text.notna(), np.nan)
    present_text = text.dropna()
    if present_text.str.fullmatch(r'-?\d{1,3}(\.\d{3})+').any() and present_text.str.fullmatch(r'-?\d+|-?\d{1,3}(\.\d{3})+').all():
        text = text.str.replace('.', '', regex=False)  # '1.613' among whole numbers: a dot as thousands separator
    numbers = pd.to_numeric(text.str.replace(r'(?<=\d),(?=\d{3}(?:\D|$))', '', regex=True), errors='coerce')
    if numbers.notna().sum() >= 0.9 * present:
        words = series[numbers.isna() & text.notna()]
        if words_out is not None:
            words_out.append(len(words))
        if len(words) and notes is not None:
            examples = ', '.join(md(value, 20) for value in pd.unique(words.astype(str))[:3])
            notes.append(f'{md(series.name)} holds numbers and {count_of(len(words), "value")} that {"is" if len(words) == 1 else "are"} not ({examples}); '
                         f'the statistics use the {int(numbers.notna().sum())} numbers, and those values are not counted as missing.')
        return numbers.astype('float64')
    if text.str.match(r'\d{4}-\d{2}-\d{2}').fillna(False).sum() >= 0.9 * present:
        # Times with a zone (Z, +01:00) in one column: compared in UTC, as pandas will not mix offsets.
        dates = pd.to_datetime(text, errors='coerce', utc=bool(text.str.contains(r'(?:Z|[+-]\d{2}:?\d{2})$').fillna(False).any()))
        if dates.notna().sum() >= 0.9 * present:
            if words_out is not None:  # 'not recorded', '2024-02-30': no date, and not missing in the file either
                words_out.append(int((dates.isna() & text.notna()).sum()))
            return dates
    return text.astype(object).where(text.notna(), np.nan)

reading_notes, file_missing = {}, {}

def tidy(frame, max_rows=MAX_ROWS, key=None, promote=False):
    """Names cleaned; text columns of numbers converted (with a note when some values are not numbers).

    No row is dropped for what coercion did: only rows empty in the file itself go. Columns empty in the file
    are kept when they have a name (a header-only CSV is still 0 rows × its columns). What is left out or
    renamed is said, so the shape here and the profile's can be told apart."""
    source = promote_header(frame) if promote else frame
    promoted = source is not frame  # a header found below a title: its names are not the profile's anyway
    original = [re.sub(r'\s+', ' ', str(c)).strip() for c in source.columns]
    frame = clean_names(source)
    renamed = {} if promoted else {new: old for old, new in zip(original, frame.columns) if old.startswith('Unnamed:')}
    rows_read = len(frame)
    frame = frame.dropna(how='all')
    unnamed_empty = [c for c in frame.columns if re.fullmatch(r'column_\d+', str(c)) and frame[c].isna().all() and len(frame)]
    frame = frame.drop(columns=unnamed_empty)
    notes, missing = [], {}
    if rows_read > len(frame):
        dropped = rows_read - len(frame)
        notes.append(f'{count_of(dropped, "row")} empty in every column {"is" if dropped == 1 else "are"} left out.')
    if unnamed_empty:
        notes.append(f'{count_of(len(unnamed_empty), "column")} with no name and no value {"is" if len(unnamed_empty) == 1 else "are"} left out.')
    kept = [name for name in renamed if name in frame.columns]
    if kept:
        notes.append('A column with no name is called by its place: ' + ', '.join(f'{md(name)} ({md(renamed[name])} in the profile)' for name in kept[:5]) + '.')
    if len(frame) > max_rows:  # bounded work: study a fixed sample of a huge table (sampled before converting)
        frame = frame.sample(max_rows, random_state=0).sort_index()
    for column in frame.columns:
        words = []
        if frame[column].dtype == object and pd.api.types.infer_dtype(frame[column], skipna=True) in ('bytes', 'mixed'):
            # A BLOB column (SQLite): bytes are no text, and decoding them failed the whole table.
            frame[column] = frame[column].map(lambda value: f'<{len(value)} bytes>' if isinstance(value, (bytes, bytearray)) else value)
        if frame[column].dtype == object:
            frame[column] = coerce_text(frame[column], notes, words)
        # Missing as in the file: empty cells and markers, not the words a conversion set aside.
        missing[column] = int(frame[column].isna().sum()) - sum(words)
    if key is not None:
        reading_notes[key], file_missing[key] = notes, pd.Series(missing, dtype='int64')
    frame = frame.reset_index(drop=True)
    return frame

print('Tidy helpers ready: promote_header, clean_names, coerce_text, tidy.')`;
}
