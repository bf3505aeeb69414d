import type { InputFile, TraceRecord } from './schema.ts';

/** One entry of a run's inputs: a file as run-start listed it, or as a later `workspace-change` added, changed or removed it. */
export interface InputFileEntry extends InputFile {
  /** `start`: listed by run-start; the others: the change that came before question `beforeTurn`. */
  change: 'start' | 'added' | 'changed' | 'removed';
  /** The question the change came before; null for a file listed at the start. */
  beforeTurn: number | null;
}

/**
 * Every version of the run's input files, in the order the trace recorded
 * them: run-start's listing, then each `workspace-change` (added and changed
 * files with their new size and SHA-256, removed ones with their last). A
 * change is written before the question it came before; a trace cut off
 * before that question's `turn-start` names the question after the last.
 */
export function inputFileHistory(records: readonly TraceRecord[]): InputFileEntry[] {
  const start = records[0];
  if (start?.type !== 'run-start') return [];
  const entries: InputFileEntry[] = start.workspace.files.map((file) => ({
    ...file,
    change: 'start',
    beforeTurn: null,
  }));
  let lastTurn = 0;
  for (const [index, record] of records.entries()) {
    if (record.type === 'turn-start') lastTurn = Math.max(lastTurn, record.turn);
    if (record.type !== 'workspace-change') continue;
    const next = records.slice(index + 1).find((later) => later.type === 'turn-start');
    const beforeTurn = next?.type === 'turn-start' ? next.turn : Math.max(lastTurn, 1) + 1;
    for (const [change, files] of [
      ['added', record.added],
      ['changed', record.changed],
      ['removed', record.removed],
    ] as const)
      for (const file of files) entries.push({ ...file, change, beforeTurn });
  }
  return entries;
}

/** The input files as the trace knows them at its end: run-start's, with every later change applied, sorted by path. */
export function currentInputFiles(records: readonly TraceRecord[]): InputFile[] {
  const files = new Map<string, InputFile>();
  for (const { change, beforeTurn: _turn, ...file } of inputFileHistory(records)) {
    if (change === 'removed') files.delete(file.path);
    else files.set(file.path, file);
  }
  return [...files.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
