import type { DataEntry } from '../first-message.ts';
import type { FallbackTarget } from './cells/load-fallback-cell.ts';
import type { LoadSource, ReadingNote, UnreadFile } from './cells/load-cell.ts';

/**
 * What the first message's `# Data` section says about loading: the tables
 * the profile can load (with its pandas expression), the files a tolerant
 * reader should try (readable by their extension but without a profiled
 * table), and the files no step reads (listed, with the reason, and skipped).
 */
export interface WorkspaceInventory {
  sources: LoadSource[];
  fallback: FallbackTarget[];
  unread: UnreadFile[];
  /** Files whose sheets or tables were not all listed to the analyst (`more_tables`): how many were, how many not. */
  partlyListed: { file: string; listed: number; unlisted: number }[];
}

// Formats the tolerant reader handles; `text` (a README) and `unsupported` files are listed, not read.
const readableFormats = new Set(['csv', 'excel', 'json', 'sqlite']);
const readableExtensions = new Set(['csv', 'tsv', 'xlsx', 'xlsm', 'xls', 'sqlite', 'sqlite3', 'db', 'json']);

/**
 * The profile's reason for a file whose bytes are not text (the kernel's `NotText`, datalyst_csv_dialect.py).
 * The first message carries only the sentence, so the sentence is what is matched.
 */
const notTextError = /^binary data, not text\b/i;

function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot < 0 ? '' : name.slice(dot + 1).toLowerCase();
}

export function inventoryWorkspace(
  entries: readonly DataEntry[],
  maxFallbackFiles: number,
): WorkspaceInventory {
  const inventory: WorkspaceInventory = { sources: [], fallback: [], unread: [], partlyListed: [] };
  for (const entry of entries) {
    const tables = entry.tables ?? [];
    if (tables.length > 0) {
      for (const table of tables)
        inventory.sources.push({ file: entry.name, table: table.name, load: table.load });
      if ((entry.more_tables ?? 0) > 0)
        inventory.partlyListed.push({
          file: entry.name,
          listed: tables.length,
          unlisted: entry.more_tables ?? 0,
        });
      continue;
    }
    // No format, or the profile failed as a whole ("not profiled"): the extension decides.
    const readable =
      entry.format === undefined || entry.error === 'not profiled'
        ? readableExtensions.has(extensionOf(entry.name))
        : readableFormats.has(entry.format);
    if (entry.error !== undefined && notTextError.test(entry.error)) {
      // The profile found bytes that are not text (a PNG named picture.csv): no reader makes a table of them.
      inventory.unread.push({ file: entry.name, reason: entry.error });
    } else if (!readable) {
      const reason = entry.format === 'text' ? 'text, not a table' : 'no reader for this kind of file';
      inventory.unread.push({ file: entry.name, reason: entry.error ?? reason });
    } else if (inventory.fallback.length < maxFallbackFiles) {
      inventory.fallback.push({ file: entry.name, table: null });
    } else {
      inventory.unread.push({ file: entry.name, reason: 'more files than the tolerant reader tries' });
    }
  }
  return inventory;
}

/** The profile's notes on how each file was read (encoding, preamble, header, identifiers, dates). */
export function readingNotes(entries: readonly DataEntry[]): ReadingNote[] {
  return entries.flatMap((entry) => (entry.notes ?? []).map((note) => ({ file: entry.name, note })));
}

/**
 * The profile's reason for an unreadable file, in plain words: its own sentences
 * ("Not valid JSON: …") as they are, a Python error without its class name
 * ("DatabaseError: file is not a database" says "file is not a database").
 */
export function plainFileError(error: string): string {
  const classed = /^[A-Z]\w*(?:Error|Exception|Warning)(?::\s*(.*))?$/s.exec(error.trim());
  const text = classed === null ? error.trim() : (classed[1] ?? '').trim();
  if (text === '') return `its reader failed (${error.trim()})`;
  const plain = text.replace(/\.$/, '');
  return plain.charAt(0).toLowerCase() + plain.slice(1);
}

/** The listed files the profile could not read, with why in plain words ("not profiled" is no reading: the profile as a whole failed). */
export function profileErrors(entries: readonly DataEntry[]): UnreadFile[] {
  return entries
    .filter(
      (entry) =>
        (entry.tables ?? []).length === 0 && entry.error !== undefined && entry.error !== 'not profiled',
    )
    .map((entry) => ({ file: entry.name, reason: plainFileError(entry.error ?? '') }));
}
