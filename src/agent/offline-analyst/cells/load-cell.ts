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

failed = []
for file, table, load in sources:
    key = f'{file} [{table}]' if table else file
    try:
        register(key, eval(load))
    except Exception as error:
        problems[key] = f'{type(error).__name__}: {str(error)[:160]}'
        failed.append([file, table])
        print(f'{key}: not loaded ({problems[key]})')
for file, reason in not_read:
    print(f'{file}: not read ({reason[:160]})')

findings = [f'{len(tables)} tables were loaded from {len({key.split(" [")[0] for key in tables})} files.']
if duplicates:
    findings.append(f'{len(duplicates)} of them repeat another table exactly (the same data in another format) and are studied once.')
findings += [f'{md(key, 60)} could not be loaded ({problems[key].split(":")[0]}).' for key in problems]
findings += [f'{md(file, 60)} was not read: {reason[:120]}' for file, reason in not_read]
show_findings('load', findings, failed=failed, **choose_focus())`;
}
