import { pythonOptionalString, pythonString } from '../python-literal.ts';
import { stageHeader } from '../stages.ts';

/** A file (or one sheet/table of it) to read with the tolerant reader; table null means every table. */
export interface FallbackTarget {
  file: string;
  table: string | null;
}

/**
 * A more tolerant reader for what the profile's reader could not load, or
 * for files the profile did not describe: it guesses the encoding, the
 * delimiter and the header row itself, and reads every sheet or table.
 */
export function loadFallbackCell(targets: readonly FallbackTarget[]): string {
  const targetLines = targets.map(
    (target) => `    (${pythonString(target.file)}, ${pythonOptionalString(target.table)}),`,
  );
  return String.raw`${stageHeader('load-fallback')}
import csv, io, unicodedata

class NotText(ValueError):
    """Bytes that are not text: a picture or random data with a .csv name is no table."""

CONTROL_SHARE = 0.1  # text a person writes holds almost no control characters; random bytes as latin-1 ~24%

def read_text_table(path):
    raw = open(path, 'rb').read()
    if b'\x00' in raw:
        raise NotText('its bytes are not text (it holds NUL bytes)')
    encoding = next(enc for enc in ('utf-8-sig', 'cp1252', 'latin-1') if _decodes(raw, enc))
    text = raw.decode(encoding)
    sample = text[:65536]
    control = sum(ch not in '\t\n\r' and unicodedata.category(ch) in ('Cc', 'Cn', 'Co', 'Cs') for ch in sample)
    if sample and control > CONTROL_SHARE * len(sample):
        raise NotText(f'its bytes are not text ({pct(control, len(sample))} of its characters are control characters '
                      f'when decoded as {encoding})')
    lines = [line for line in text.splitlines()[:300] if line.strip()]
    def widths(sep):
        return [len(next(csv.reader([line], delimiter=sep), [])) for line in lines]
    def score(sep):
        counts = pd.Series(widths(sep))
        mode = int(counts.mode().iloc[0]) if len(counts) else 1
        return (mode > 1) * (counts == mode).mean() * min(mode, 50), mode
    sep = max([',', ';', '\t', '|'], key=lambda s: score(s)[0])
    mode = score(sep)[1]
    header = next((i for i, line in enumerate(text.splitlines()) if line.strip()
                   and sum(bool(f.strip()) for f in next(csv.reader([line], delimiter=sep), [])) >= mode / 2), 0)
    # Every row is kept: a line with more fields than the header keeps its first fields, and is reported.
    long_lines = []
    def keep_row(fields):
        long_lines.append(fields)
        return fields[:mode]
    frame = pd.read_csv(io.StringIO(text), sep=sep, skiprows=header, dtype=str, keep_default_na=False,
                        engine='python', on_bad_lines=keep_row)
    print(f'{path}: delimiter {sep!r}, header on line {header + 1}')
    if long_lines:
        examples = '; '.join(md(sep.join(fields), 50) for fields in long_lines[:3])
        reader_notes.append(f'{md(path, 60)}: {count_of(len(long_lines), "line")} held more fields than the header; '
                            f'the rows are kept without the extra fields ({examples}).')
    return frame

def _decodes(raw, encoding):
    try:
        raw.decode(encoding)
        return True
    except UnicodeDecodeError:
        return False

def read_any(path, table=None):
    suffix = path.lower().rsplit('.', 1)[-1]
    if suffix in ('csv', 'tsv', 'txt', 'dat'):
        return {'': read_text_table(path)}
    if suffix in ('xlsx', 'xlsm', 'xls'):
        sheets = pd.read_excel(path, sheet_name=table, header=None)
        return sheets if isinstance(sheets, dict) else {table: sheets}
    if suffix in ('sqlite', 'sqlite3', 'db'):
        connection = sqlite3.connect(f'file:{path}?mode=ro', uri=True)
        try:
            names = [table] if table else [r[0] for r in connection.execute("select name from sqlite_master where type='table'")]
            return {name: pd.read_sql_query('select * from "%s"' % name.replace('"', '""'), connection) for name in names}
        finally:
            connection.close()
    if suffix == 'json':
        data = json.load(open(path, encoding='utf-8'))
        return {'': pd.json_normalize(data) if isinstance(data, (list, dict)) else pd.DataFrame({'value': [data]})}
    raise ValueError(f'no reader for .{suffix} files')

targets = [
${targetLines.join('\n')}
]
recovered, reader_notes = [], []
for file, table in targets:
    try:
        problems.pop(f'{file} [{table}]' if table else file, None)
        workbook = file.lower().endswith(('.xlsx', '.xlsm', '.xls'))
        for name, raw in read_any(file, table).items():
            register(f'{file} [{name}]' if name else file, raw, promote=workbook)
            recovered.append(f'{file} [{name}]' if name else file)
    except Exception as error:
        key = f'{file} [{table}]' if table else file
        problems[key] = f'{type(error).__name__}: {str(error)[:160]}'
        print(f'{key}: still not loaded ({problems[key]})')
findings = [f'The tolerant reader loaded {md(key, 60)}: {shape_of(tables[key])}.' for key in recovered[:8]]
shape_listed.update(recovered[:8])
findings += reader_notes[:8]
for key in recovered:
    findings += [f'{md(key, 60)}: {note}' for note in reading_notes.get(key, [])[:5]]
findings += [f'{md(key, 60)} was not read: {problems[key].split(": ", 1)[1]}.' if problems[key].startswith('NotText:')
             else f'{md(key, 60)} could not be loaded ({md_text(problems[key])}).' for key in problems]
show_findings('load-fallback', findings, failed=[], **choose_focus())`;
}
