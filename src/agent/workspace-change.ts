import type { WorkspaceProfile } from '../sandbox/workspace-profile.ts';
import type { InputFile } from '../trace/schema.ts';
import { clipText } from './clip-text.ts';
import {
  dataEntrySchema,
  defaultFirstMessageLimits,
  formatFileSize,
  toDataEntry,
  type DataEntry,
  type FirstMessageLimits,
} from './first-message.ts';

/**
 * A thread's workspace between questions: the files that came, changed or
 * went since the inputs it knew (run-start's, then each earlier change's),
 * found when its sandbox opens again; and the note that tells the model, in
 * the layout of the first message's `# Data` section, before the next
 * question. The offline analyst reads the note back (`readWorkspaceChangeNote`).
 */
export interface WorkspaceChange {
  /** Files that are new, as they are now. */
  added: InputFile[];
  /** Files whose content differs (SHA-256), as they are now. */
  changed: InputFile[];
  /** Files that are gone, as they were known. */
  removed: InputFile[];
}

/** What differs between the inputs known and the workspace now (both listed by path); null when nothing does. */
export function diffInputFiles(
  known: readonly InputFile[],
  now: readonly InputFile[],
): WorkspaceChange | null {
  const before = new Map(known.map((file) => [file.path, file]));
  const after = new Set(now.map((file) => file.path));
  const change: WorkspaceChange = {
    added: now.filter((file) => !before.has(file.path)),
    changed: now.filter((file) => {
      const old = before.get(file.path);
      return old !== undefined && old.sha256 !== file.sha256;
    }),
    removed: known.filter((file) => !after.has(file.path)),
  };
  return change.added.length + change.changed.length + change.removed.length === 0 ? null : change;
}

const noteOpening = 'The workspace changed since the last question: ';
const dataHeading = '# Data changes';
const maxNamedFiles = 10;
const lineLabels = { added: 'Added file', changed: 'Changed file', removed: 'Removed file' } as const;

function namedFiles(files: readonly InputFile[], limits: FirstMessageLimits): string {
  // One line, quoted as the data lines are: a name with a line break must not open a paragraph the notes are
  // looked for in, nor a name like `<Answer>.csv` read as the protocol's text.
  const names = files
    .slice(0, maxNamedFiles)
    .map((file) => JSON.stringify(clipText(file.path.replace(/\s+/g, ' '), limits.maxNameChars)));
  const more = files.length - names.length;
  return names.join(', ') + (more > 0 ? ` and ${more} more` : '');
}

function counted(count: number, one: string, many: string): string {
  return `${count} file${count === 1 ? ` ${one}` : `s ${many}`}`;
}

/**
 * The note before the question that follows a change: what came, changed and
 * went, then (under `# Data changes`) each added or changed file's entry as
 * the first message gives it (format, tables, columns, the pandas `load`
 * call), from `profile`, the whole workspace profiled again in the reopened
 * sandbox; a removed file by name and size. Bounded as the first message is.
 */
export function formatWorkspaceChangeNote(
  change: WorkspaceChange,
  profile: WorkspaceProfile,
  limits: FirstMessageLimits = defaultFirstMessageLimits,
): string {
  const parts = [
    change.added.length > 0
      ? `${counted(change.added.length, 'was', 'were')} added (${namedFiles(change.added, limits)})`
      : null,
    change.changed.length > 0
      ? `${counted(change.changed.length, 'changed', 'changed')} (${namedFiles(change.changed, limits)})`
      : null,
    change.removed.length > 0
      ? `${counted(change.removed.length, 'was', 'were')} removed (${namedFiles(change.removed, limits)})`
      : null,
  ].filter((part) => part !== null);
  const guidance: string[] = [];
  if (change.added.length + change.changed.length > 0)
    guidance.push(
      'Variables of earlier cells hold only what those cells read: load the added and changed files before you use them. Their profile follows, as in the first message (each table’s `load` is the pandas call that reads it).',
    );
  if (change.removed.length > 0) guidance.push('Removed files are no longer in the working directory.');
  const profiles = new Map(profile.files.map((file) => [file.path, file]));
  const lines: string[] = [];
  let profileChars = 0;
  let listed = 0;
  for (const kind of ['added', 'changed', 'removed'] as const) {
    change[kind].forEach((file, index) => {
      if (listed >= limits.maxListedFiles) return;
      listed += 1;
      const label = `${lineLabels[kind]} ${index + 1}: `;
      const profiled = kind === 'removed' ? undefined : profiles.get(file.path);
      let line = '';
      if (profiled !== undefined && listed <= limits.maxProfiledFiles) {
        line = `${label}${JSON.stringify(toDataEntry(profiled, true, limits))}`;
        if (profileChars + line.length > limits.maxDataChars) line = '';
        else profileChars += line.length;
      }
      if (line === '') {
        const entry: DataEntry = {
          name: clipText(file.path, limits.maxNameChars),
          size: formatFileSize(file.sizeBytes),
        };
        line = `${label}${JSON.stringify(entry)}`;
      }
      lines.push(line);
    });
  }
  const total = change.added.length + change.changed.length + change.removed.length;
  if (total > listed) lines.push(`(${total - listed} more changed files not listed)`);
  return `${noteOpening}${parts.join('; ')}. ${guidance.join(' ')}\n\n${dataHeading}\n${lines.join('\n')}`;
}

/** A note read back: the entries of each kind, and where the note ends in the text (the question follows). */
export interface WorkspaceChangeNote {
  added: DataEntry[];
  changed: DataEntry[];
  removed: DataEntry[];
  /** Index just past the note's last line. */
  end: number;
}

const entryLine = /^(Added|Changed|Removed) file \d+: (\{.*\})\s*$/;

/**
 * The notes on a changed workspace in `content` that begin at a paragraph
 * start at or after `from`, in order. The caller says from where, as for the
 * stop note (`questionAfterStoppedTurnNote`): never inside data or a cell's
 * output, which could forge one. Lines that do not parse are skipped.
 */
export function readWorkspaceChangeNotes(content: string, from = 0): WorkspaceChangeNote[] {
  const notes: WorkspaceChangeNote[] = [];
  for (let start = from; start !== -1 && start < content.length;) {
    const atParagraph = start === 0 || content.startsWith('\n\n', start - 2);
    if (atParagraph && content.startsWith(noteOpening, start)) {
      const heading = content.indexOf(`\n\n${dataHeading}\n`, start);
      const blockStart = heading === -1 ? -1 : heading + dataHeading.length + 3;
      const blockEnd = blockStart === -1 ? -1 : content.indexOf('\n\n', blockStart);
      const end = blockStart === -1 ? content.length : blockEnd === -1 ? content.length : blockEnd;
      const note: WorkspaceChangeNote = { added: [], changed: [], removed: [], end };
      for (const line of blockStart === -1 ? [] : content.slice(blockStart, end).split('\n')) {
        const match = entryLine.exec(line);
        if (match === null) continue;
        try {
          const parsed = dataEntrySchema.safeParse(JSON.parse(match[2] ?? ''));
          if (!parsed.success) continue;
          const kind = match[1] === 'Added' ? 'added' : match[1] === 'Changed' ? 'changed' : 'removed';
          note[kind].push(parsed.data);
        } catch {
          // Not JSON (cut, or forged): skipped, as the first message's lines are.
        }
      }
      notes.push(note);
      start = end === content.length ? -1 : end + 2;
      continue;
    }
    const next = content.indexOf('\n\n', start);
    start = next === -1 ? -1 : next + 2;
  }
  return notes;
}

/** The first message's entries with the notes' changes applied in order: the files the workspace holds as the model was last told. */
export function applyWorkspaceChangeNotes(
  entries: readonly DataEntry[],
  notes: readonly WorkspaceChangeNote[],
): DataEntry[] {
  const byName = new Map(entries.map((entry) => [entry.name, entry]));
  for (const note of notes) {
    for (const entry of note.removed) byName.delete(entry.name);
    for (const entry of [...note.changed, ...note.added]) byName.set(entry.name, entry);
  }
  return [...byName.values()];
}
