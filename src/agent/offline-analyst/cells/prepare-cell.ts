import { stageHeader } from '../stages.ts';

/**
 * Tidy steps for tables read from messy files (a header row below a title,
 * numbers written as text with thousands separators, cells holding only
 * spaces or a missing-value marker). Defined once; the load cells apply them.
 */
export function prepareCell(maxRows: number): string {
  return String.raw`${stageHeader('prepare')}
MAX_ROWS = ${maxRows}
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

def coerce_text(series):
    """Text that holds numbers ('229,932.50', German '1.613'), ISO dates, or missing markers ('.', a lone NBSP)."""
    text = series.astype('string').str.replace('\u00a0', ' ', regex=False).str.strip()
    text = text.mask(text.isin(MISSING_MARKERS))
    present = int(text.notna().sum())
    if present == 0:
        return pd.Series(np.nan, index=series.index)
    present_text = text.dropna()
    if present_text.str.fullmatch(r'-?\d{1,3}(\.\d{3})+').any() and present_text.str.fullmatch(r'-?\d+|-?\d{1,3}(\.\d{3})+').all():
        text = text.str.replace('.', '', regex=False)  # '1.613' among whole numbers: a dot as thousands separator
    numbers = pd.to_numeric(text.str.replace(r'(?<=\d),(?=\d{3}(?:\D|$))', '', regex=True), errors='coerce')
    if numbers.notna().sum() >= 0.9 * present:
        return numbers.astype('float64')
    if text.str.match(r'\d{4}-\d{2}-\d{2}').fillna(False).sum() >= 0.9 * present:
        dates = pd.to_datetime(text, errors='coerce')
        if dates.notna().sum() >= 0.9 * present:
            return dates
    return text.astype(object).where(text.notna(), np.nan)

def tidy(frame, max_rows=MAX_ROWS):
    frame = clean_names(promote_header(frame)).dropna(how='all').dropna(axis=1, how='all')
    for column in frame.columns[frame.dtypes == object]:
        frame[column] = coerce_text(frame[column])
    frame = frame.dropna(how='all').dropna(axis=1, how='all')
    if len(frame) > max_rows:  # bounded work: study a fixed sample of a huge table
        frame = frame.sample(max_rows, random_state=0).sort_index()
    return frame.reset_index(drop=True)

print('Tidy helpers ready: promote_header, clean_names, coerce_text, tidy.')`;
}
