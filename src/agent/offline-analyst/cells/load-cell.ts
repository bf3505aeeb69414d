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

export function loadCell(
  sources: readonly LoadSource[],
  unread: readonly UnreadFile[],
  maxFocusTables: number,
): string {
  const sourceLines = sources.map(
    (source) =>
      `    (${pythonString(source.file)}, ${pythonString(source.table)}, ${pythonString(source.load)}),`,
  );
  const unreadLines = unread.map((file) => `    (${pythonString(file.file)}, ${pythonString(file.reason)}),`);
  return String.raw`${stageHeader('load')}
# Each table is read the way the sandbox's profile found (encoding, delimiter, header row, sheet).
sources = [
${sourceLines.join('\n')}
]
not_read = [
${unreadLines.join('\n')}
]

def choose_focus(limit=${maxFocusTables}, skip=()):
    """The tables to study in depth: no duplicates, largest first (rows times useful columns)."""
    def weight(key):
        useful = sum(kind in ('number', 'category', 'datetime', 'boolean') for kind in kinds(tables[key]).values())
        return len(tables[key]) * useful
    ranked = sorted((key for key in tables if key not in duplicates and key not in skip), key=lambda key: -weight(key))
    useful = [key for key in ranked if weight(key) > 0]
    focus[:] = ([key for key in useful if len(tables[key]) >= 5] or useful)[:limit]
    counts = {}
    for key in focus:
        for kind in kinds(tables[key]).values():
            counts[kind] = counts.get(kind, 0) + 1
    return {'tables': len(tables), 'unique': len(tables) - len(duplicates), 'focus': focus, 'kinds': counts}

def looks_misread(path, frame):
    """A text table read with fewer columns than most of its lines have fields (wrong delimiter, a preamble)."""
    import csv
    with open(path, encoding='latin-1') as handle:
        lines = [line for line in handle.read(65536).splitlines() if line.strip()][:200]
    fields = max((sorted(len(next(csv.reader([line], delimiter=sep), [])) for line in lines) or [1])[len(lines) // 2]
                 for sep in (',', ';', '\t', '|'))
    return fields >= 2 and fields > 1.5 * frame.dropna(axis=1, how='all').shape[1]

failed = []
for file, table, load in sources:
    key = f'{file} [{table}]' if table else file
    try:
        frame = eval(load)
        if file.lower().endswith(('.csv', '.tsv', '.txt')) and looks_misread(file, frame):
            raise ValueError(f'{frame.shape[1]} columns, but most lines hold more fields: delimiter or header not recognised')
        register(key, frame)
    except Exception as error:
        problems[key] = f'{type(error).__name__}: {str(error)[:160]}'
        failed.append([file, table])
        print(f'{key}: not loaded ({problems[key]})')
for file, reason in not_read:
    print(f'{file}: not read ({reason[:160]})')

files_read = len({key.split(' [')[0] for key in tables})
findings = [f'{count_of(len(tables), "table")} loaded from {count_of(files_read, "file")}.']
if duplicates:
    findings.append(f'{count_of(len(duplicates), "table")} repeat another table exactly (the same data in another format) and are studied once.')
findings += [f"{md(key, 60)}: the profile's reader failed ({problems[key].split(':')[0]}), so a tolerant reader tries it next." for key in problems]
if not_read:
    findings.append('Not read: ' + '; '.join(f'{md(file, 60)} ({reason[:80]})' for file, reason in not_read[:8]) + '.')
show_findings('load', findings, failed=failed, **choose_focus())`;
}
