import { pythonString } from '../python-literal.ts';
import { stageHeader } from '../stages.ts';

/** One table as the sandbox's profile found it: the pandas expression that loads it. */
export interface LoadSource {
  file: string;
  /** Sheet or SQLite table; '' for a single-table file. */
  table: string;
  load: string;
}

/** A file the profile could not read, or a format no step reads; listed, not loaded. */
export interface UnreadFile {
  file: string;
  reason: string;
}

/** A note of the profile on how a file was read (encoding, preamble, header, identifiers, dates). */
export interface ReadingNote {
  file: string;
  note: string;
}

export interface LoadCellOptions {
  /** Files larger than this are read in chunks: every row counted, a random sample kept. */
  largeFileBytes: number;
  /** Every file the first message listed; the cell inventories the others itself (past the listing limit). */
  listedFiles: readonly string[];
  /** The listed files this analyst studies: all of them, or a deep sub-analysis's own tables. Default: `listedFiles`. */
  studiedFiles?: readonly string[];
  /** Every listed file the profile could not read, with its reason, also those this analyst does not study. */
  profileErrors?: readonly UnreadFile[];
}

export function loadCell(
  sources: readonly LoadSource[],
  unread: readonly UnreadFile[],
  notes: readonly ReadingNote[],
  options: LoadCellOptions,
): string {
  const sourceLines = sources.map(
    (source) =>
      `    (${pythonString(source.file)}, ${pythonString(source.table)}, ${pythonString(source.load)}),`,
  );
  const unreadLines = unread.map((file) => `    (${pythonString(file.file)}, ${pythonString(file.reason)}),`);
  const listedLines = options.listedFiles.map((file) => `    ${pythonString(file)},`);
  const studiedLines = (options.studiedFiles ?? options.listedFiles).map(
    (file) => `    ${pythonString(file)},`,
  );
  const errorLines = (options.profileErrors ?? []).map(
    (file) => `    (${pythonString(file.file)}, ${pythonString(file.reason)}),`,
  );
  const noteLines = notes.map((note) => `    (${pythonString(note.file)}, ${pythonString(note.note)}),`);
  return String.raw`${stageHeader('load')}
# Each table is read the way the sandbox's profile found (encoding, delimiter, header row, sheet).
# A large CSV is read in chunks: every row is counted, a fixed-rate random sample is kept, so the
# memory needed follows the sample, not the file.
import os
sources = [
${sourceLines.join('\n')}
]
not_read = [
${unreadLines.join('\n')}
]
profile_notes = [
${noteLines.join('\n')}
]
listed_files = [
${listedLines.join('\n')}
]
studied_files = [
${studiedLines.join('\n')}
]
profile_errors = dict([
${errorLines.join('\n')}
])
LARGE_FILE_BYTES = ${options.largeFileBytes}

class SampledReader:
    """Stands in for pd in a profile's load expression: read_csv of a large file goes in chunks."""
    def __init__(self):
        self.total_rows = None
    def __getattr__(self, name):
        return getattr(pd, name)
    def read_csv(self, path, **kwargs):
        self.total_rows = None
        size = os.path.getsize(path)
        if size <= LARGE_FILE_BYTES or 'nrows' in kwargs:
            return pd.read_csv(path, **kwargs)
        with open(path, 'rb') as handle:
            head = handle.read(1 << 20)
        estimated = max(1, int(size / max(1.0, len(head) / max(1, head.count(b'\n')))))
        rate = min(1.0, 1.1 * MAX_ROWS / estimated)
        generator = np.random.default_rng(0)
        parts, total = [], 0
        for chunk in pd.read_csv(path, chunksize=max(20_000, MAX_ROWS // 4), **kwargs):
            total += len(chunk)
            parts.append(chunk if rate >= 1 else chunk[generator.random(len(chunk)) < rate])
        frame = pd.concat(parts) if parts else pd.read_csv(path, nrows=0, **kwargs)
        del parts
        for column in frame.columns[frame.dtypes == 'int64']:
            frame[column] = pd.to_numeric(frame[column], downcast='integer')  # compact: int8…int32 when they fit
        self.total_rows = total
        return frame

sampled_reader = SampledReader()
failed = []
for file, table, load in sources:
    key = f'{file} [{table}]' if table else file
    try:
        sampled_reader.total_rows = None
        frame = read_table(load, sampled_reader)
        if file.lower().endswith(('.csv', '.tsv', '.txt')) and looks_misread(file, frame):
            raise ValueError(f'{frame.shape[1]} columns, but most lines hold more fields: delimiter or header not recognised')
        register(key, frame, total_rows=sampled_reader.total_rows)
        del frame
    except Exception as error:
        problems[key] = f'{type(error).__name__}: {str(error)[:160]}'
        failed.append([file, table])
        print(f'{key}: not loaded ({problems[key]})')
for file, reason in not_read:
    print(f'{file}: not read ({reason[:160]})')

# Every file of the workspace, also those past the first message's limit: name, size, and shape or why not.
INVENTORY_FILE = 'datalyst_inventory.csv'
inventory = []
for folder, subfolders, names in os.walk('.'):
    subfolders[:] = sorted(d for d in subfolders if d not in ('__pycache__', '.ipynb_checkpoints', '.git'))
    for name in sorted(names):
        path = os.path.relpath(os.path.join(folder, name), '.').replace(os.sep, '/')
        if path != INVENTORY_FILE:
            inventory.append(path)
listed, studied = set(listed_files), set(studied_files)
def clip(text, limit):
    return text if len(text) <= limit else text[: limit - 1] + '…'
def file_status(path):
    """What became of a file, and why: each file its own reason."""
    if any(key.split(' [')[0] == path for key in tables):
        return 'read', None
    if path in profile_errors or path in problems:
        return 'unreadable', 'could not be read: ' + (problems.get(path) or profile_errors[path])
    if path in dict(not_read):
        return 'skipped', dict(not_read)[path]
    if path not in listed:
        return 'unlisted', 'past the limit of files listed to the analyst'
    if path not in studied:
        return 'elsewhere', 'not one of the tables this part of the analysis studies'
    return 'pending', 'left to the tolerant reader'
def inventory_row(path):
    shapes = [f'{key}: {shape_of(frame, names=0)}' for key, frame in tables.items() if key.split(' [')[0] == path]
    try:
        size = os.path.getsize(path)
    except OSError:
        size = ''
    return [path, size, '; '.join(shapes) if shapes else file_status(path)[1]]
inventory_written = False
if len(inventory) > len(studied) or len(inventory) > 20:
    try:
        with open(INVENTORY_FILE, 'w', newline='', encoding='utf-8') as handle:
            csv.writer(handle).writerows([['file', 'bytes', 'shape or why not read']] + [inventory_row(p) for p in inventory])
        inventory_written = True
    except OSError as error:
        print(f'The inventory could not be written ({error})')

files_read = len({key.split(' [')[0] for key in tables})
findings = [recovery_note] if recovery_note else []
if len(inventory) > len(studied):
    statuses = [file_status(path)[0] for path in inventory]
    def counted(status, one, many):
        n = statuses.count(status)
        return [f'{n} {one if n == 1 else many}'] if n else []
    parts = (counted('read', 'was read', 'were read')
             + counted('unreadable', 'could not be read', 'could not be read')
             + counted('skipped', 'was not read (the reason follows)', 'were not read (the reasons follow)')
             + counted('pending', 'is left to the tolerant reader', 'are left to the tolerant reader')
             + counted('elsewhere', 'is not one of the tables this part of the analysis studies',
                       'are not among the tables this part of the analysis studies')
             + counted('unlisted', 'was past the limit of files listed to the analyst, so not read',
                       'were past the limit of files listed to the analyst, so not read'))
    listing = parts[0] if len(parts) == 1 else ', '.join(parts[:-1]) + ' and ' + parts[-1]
    findings.append(f'The workspace holds {count_of(len(inventory), "file")}: {listing}.')
    unreadable = [(path, file_status(path)[1]) for path in inventory if file_status(path)[0] == 'unreadable']
    if unreadable:  # each with its own reason, also those this part of the analysis does not study
        findings.append('Could not be read: ' + '; '.join(f'{md(path, 60)} ({md_text(clip(why.split(": ", 1)[1], 200))})' for path, why in unreadable[:8])
                        + (f'; and {count_of(len(unreadable) - 8, "more file")}' if len(unreadable) > 8 else '') + '.')
if inventory_written:
    findings.append(f'Every one of the {count_of(len(inventory), "file")} is listed with its size and shape (or why it was not read) in {md(INVENTORY_FILE)}.')
findings.append(f'{count_of(len(tables), "table")} loaded from {count_of(files_read, "file")}'
                + (" by the profile's reader." if problems else '.'))
LISTED_TABLES = 20
shape_listed.update(list(tables)[:LISTED_TABLES])  # the overview does not say these shapes again
for key, frame in list(tables.items())[:LISTED_TABLES]:
    findings.append(f'{md(key, 60)}: {shape_of(frame)}.')
if len(tables) > LISTED_TABLES:
    unlisted = len(tables) - LISTED_TABLES
    findings.append(f'{count_of(unlisted, "more table")} {"is" if unlisted == 1 else "are"} not listed here'
                    + (f' ({md(INVENTORY_FILE)} lists every file).' if inventory_written else '.'))
for key, (rows, whole) in sampled.items():
    findings.append(f'Figures for {md(key, 60)} come from a random sample of {rows} of its {whole} rows (every row was counted).')
if duplicates:
    one = len(duplicates) == 1
    findings.append(f'{count_of(len(duplicates), "table")} {"repeats" if one else "repeat"} another table exactly '
                    f'(the same data in another format) and {"is" if one else "are"} studied once.')
# A file that was not read is in the "Not read" line with why; its profile note ("A text file of 15 lines.") would say it twice.
for file, note in [(file, note) for file, note in profile_notes if file not in dict(not_read)][:20]:
    findings.append(f'{md(file, 60)}: {md_text(note)}')  # the kernel's notes quote names from the data
for key, notes in reading_notes.items():
    findings += [f'{md(key, 60)}: {note}' for note in notes[:5]]
findings += [f"{md(key, 60)}: the profile's reader failed ({problems[key].split(':')[0]}), so a tolerant reader tries it next." for key in problems]
if not_read:
    findings.append('Not read: ' + '; '.join(f'{md(file, 60)} ({md_text(reason[:120])})' for file, reason in not_read[:8])
                    + (f'; and {count_of(len(not_read) - 8, "more file")}' if len(not_read) > 8 else '') + '.')
focus_facts = choose_focus()
for key in [k for k in tables if k not in focus and k not in duplicates][:10]:
    # Not studied in depth (no column to chart): still say what its columns hold.
    frame, k = tables[key], kinds(tables[key])
    for column in [c for c in frame.columns if k[c] == 'constant'][:3]:
        where = 'in every row' if frame[column].notna().all() else 'where present'
        findings.append(f'{md(key, 60)}: {md(column)} holds a single value ({md(value_text(frame[column].dropna().iloc[0]))}) {where}.')
show_findings('load', findings, failed=failed, **focus_facts)`;
}
