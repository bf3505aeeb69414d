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

export function loadCell(sources: readonly LoadSource[], unread: readonly UnreadFile[]): string {
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
