import type { WorkspaceProfile } from '../sandbox/workspace-profile.ts';

/** One line of "How the files were read": a profile note or why a file could not be read. */
export interface ReadingNote {
  file: string;
  note: string;
}

const maxNotes = 200;

/**
 * What the sandbox's profile noted while reading the inputs (encoding
 * fallbacks, preamble and footer lines skipped, no header row, long lines,
 * identifiers kept as text, date formats) and every file it could not read,
 * for the report's provenance. Text files' line counts are left out: they say
 * nothing about how data was read.
 */
export function readingNotes(profile: WorkspaceProfile | null): ReadingNote[] {
  if (profile === null) return [];
  const notes: ReadingNote[] = [];
  for (const file of profile.files) {
    if (file.error !== null) notes.push({ file: file.path, note: `could not be read: ${file.error}` });
    if (file.format === 'text') continue;
    for (const note of file.notes) notes.push({ file: file.path, note });
  }
  const total = profile.totalFiles ?? profile.files.length;
  if (total > profile.files.length) {
    notes.push({
      file: '(workspace)',
      note: `${profile.files.length} of ${total} files were profiled; the others were not read.`,
    });
  }
  return notes.slice(0, maxNotes);
}
