import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { deepRecordSchema, type DeepRecord } from './deep-schema.ts';

/** The deep run's record, beside the `sub/` folders of its sub-analyses. */
export const DEEP_RECORD_FILE = 'deep.json';

/** Writes `deep.json` atomically (a reader never sees half a record), after checking it against the schema. */
export async function writeDeepRecord(runDir: string, record: DeepRecord): Promise<void> {
  const text = deepRecordText(record);
  const target = path.join(runDir, DEEP_RECORD_FILE);
  const temporary = `${target}.${process.pid}.tmp`;
  await writeFile(temporary, text);
  await rename(temporary, target);
}

/**
 * `writeDeepRecord` in one synchronous step, as the engine saves the record while the run goes on: a
 * process that exits at once (a second Ctrl-C, `process.exit` from a signal handler, which runs between
 * event-loop tasks) never does so between writing the temporary file and renaming it, so neither half a
 * record nor a `deep.json.<pid>.tmp` is left. A failed write removes its temporary file and throws.
 */
export function writeDeepRecordSync(runDir: string, record: DeepRecord): void {
  const text = deepRecordText(record);
  const target = path.join(runDir, DEEP_RECORD_FILE);
  const temporary = `${target}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, text);
    renameSync(temporary, target);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

/** The text of `deep.json` (checked against the schema). */
export function deepRecordText(record: DeepRecord): string {
  return `${JSON.stringify(deepRecordSchema.parse(record), null, 2)}\n`;
}

/** Reads a deep run's record; null when the folder is not a deep run. A record that fails the schema throws (zod names the field). */
export async function readDeepRecord(runDir: string): Promise<DeepRecord | null> {
  let text: string;
  try {
    text = await readFile(path.join(runDir, DEEP_RECORD_FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  return deepRecordSchema.parse(JSON.parse(text));
}
