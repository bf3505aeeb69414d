import type { RunStartRecord } from '../trace/schema.ts';

/** What a report's provenance says of a re-run: the earlier run it re-ran (id, folder name, trace hash). */
export interface RerunOfFacts {
  runId: string;
  /** The earlier run folder's name (its last path segment; the full path is the trace's). */
  folderName: string;
  traceSha256: string;
}

/** The earlier run a re-run re-ran, or null for a run that is not a re-run. */
export function rerunOfFacts(start: RunStartRecord): RerunOfFacts | null {
  const rerunOf = start.rerunOf;
  if (rerunOf === undefined) return null;
  const folderName = rerunOf.runDir.split(/[\\/]/).findLast((segment) => segment !== '') ?? rerunOf.runDir;
  return { runId: rerunOf.runId, folderName, traceSha256: rerunOf.traceSha256 };
}
