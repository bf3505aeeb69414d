import { pythonString } from '../python-literal.ts';
import type { LoadSource, UnreadFile } from './load-cell.ts';

/** The first line of the cell. It is no step of the plan, so `stageOfCode` reads no stage from it. */
export const newFilesCellHeader = '# offline-analyst follow-up: load the files the workspace gained';

/**
 * A follow-up after the thread's workspace changed (its note named files
 * that came, changed or went since the last answer): the kernel holds the
 * tables of the earlier files, so the added and changed ones are read the
 * way their profile found (`sources`, as the load step reads them, large
 * CSVs in chunks when the load step's reader is there) and registered
 * beside the others; a changed or removed file's old tables are forgotten
 * first. Files whose profile found no table are named with the reason. The
 * findings say what was loaded; `tables` then holds every file, so
 * "Describe the data" covers them.
 */
export function newFilesCell(
  sources: readonly LoadSource[],
  removed: readonly string[],
  notLoaded: readonly UnreadFile[],
): string {
  const sourceLines = sources.map(
    (source) =>
      `    (${pythonString(source.file)}, ${pythonString(source.table)}, ${pythonString(source.load)}),`,
  );
  const removedLines = removed.map((file) => `    ${pythonString(file)},`);
  const unreadLines = notLoaded.map(
    (file) => `    (${pythonString(file.file)}, ${pythonString(file.reason)}),`,
  );
  return String.raw`${newFilesCellHeader}
new_sources = [
${sourceLines.join('\n')}
]
gone_files = [
${removedLines.join('\n')}
]
new_not_loaded = [
${unreadLines.join('\n')}
]

def forget_file(file):
    """A file that changed or went: its tables, and what was noted of them, are no longer the data."""
    of_file = lambda key: key.split(' [')[0] == file
    for key in [key for key in list(tables) if of_file(key)]:
        tables.pop(key, None)
        for notes in (fingerprints, sampled):
            notes.pop(key, None)
    for key in [key for key in list(problems) if of_file(key)]:
        problems.pop(key, None)
    for key, same in list(duplicates.items()):
        if of_file(key) or of_file(same):
            duplicates.pop(key, None)
    focus[:] = [key for key in focus if not of_file(key)]

findings = []
for file in gone_files:
    forget_file(file)
    findings.append(f'{md(file, 60)} was removed from the workspace: its tables are no longer used.')
for file in dict.fromkeys(file for file, _, _ in new_sources):
    forget_file(file)
reader = globals().get('sampled_reader')  # the load step's reader of large CSVs, when it ran
loaded = []
for file, table, load in new_sources:
    key = f'{file} [{table}]' if table else file
    try:
        if reader is not None:
            reader.total_rows = None
        frame = read_table(load, reader if reader is not None else pd)
        if file.lower().endswith(('.csv', '.tsv', '.txt')) and looks_misread(file, frame):
            raise ValueError(f'{frame.shape[1]} columns, but most lines hold more fields: delimiter or header not recognised')
        register(key, frame, total_rows=getattr(reader, 'total_rows', None))
        del frame
        loaded.append(key)
        same = duplicates.get(key)
        findings.append(f'{md(key, 60)}: {shape_of(tables[key])}, loaded now' + (f' (the same data as {md(same, 60)})' if same else '') + '.')
    except Exception as error:
        problems[key] = f'{type(error).__name__}: {str(error)[:160]}'
        findings.append(f'{md(key, 60)}: not loaded ({md_text(problems[key])}).')
for file, reason in new_not_loaded:
    findings.append(f'{md(file, 60)}: not loaded ({md_text(reason[:160])}).')
choose_focus()
show_findings('new-files', findings, loaded=loaded)`;
}
