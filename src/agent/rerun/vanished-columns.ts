import type { WorkspaceProfile } from '../../sandbox/workspace-profile.ts';
import { groundingSources } from '../../trace/grounding-sources.ts';
import type { ExecutionRecord } from '../../trace/schema.ts';

/**
 * A column the earlier answer names that the new data no longer has: the
 * offline analyst (and any code that finds its columns by itself) raises no
 * error when `units` becomes `quantity`, so no cell fails, yet the answer
 * carried over would still describe `units`. Found by what the outputs
 * print, not by guessing at renames.
 */
export interface VanishedColumn {
  /** The column as the answer names it (in backticks). */
  name: string;
  /** The first recorded cell whose output printed it; no new output does. */
  outputId: string;
}

/** What each cell that ran printed (stdout, value, tables), as the grounding reads it. */
function printed(executions: readonly ExecutionRecord[]) {
  return groundingSources(executions.filter((execution) => execution.result.status === 'ok'));
}

function columnsOf(profile: WorkspaceProfile): Set<string> {
  return new Set(
    profile.files.flatMap((file) =>
      file.tables.flatMap((table) => table.columns.map((column) => column.name)),
    ),
  );
}

function mentions(text: string, name: string): boolean {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(?<![\\p{L}\\p{N}_])${escaped}(?![\\p{L}\\p{N}_])`, 'u').test(text);
}

/**
 * The columns of the earlier data (its profile) that the answer names in
 * backticks, that an earlier output printed, and that no new output prints
 * and the new data (when profiled) does not have. Empty when the earlier run
 * has no profile: then which backticked words are columns cannot be told.
 */
export function vanishedColumns(
  answer: string,
  oldProfile: WorkspaceProfile | null,
  newProfile: WorkspaceProfile | null,
  oldExecutions: readonly ExecutionRecord[],
  newExecutions: readonly ExecutionRecord[],
): VanishedColumn[] {
  if (oldProfile === null) return [];
  const oldColumns = columnsOf(oldProfile);
  const newColumns = newProfile === null ? new Set<string>() : columnsOf(newProfile);
  const named = new Set([...answer.matchAll(/`([^`\n]+)`/g)].map((match) => match[1] ?? ''));
  const newText = printed(newExecutions)
    .map((source) => source.text)
    .join('\n');
  const oldSources = printed(oldExecutions);
  const vanished: VanishedColumn[] = [];
  for (const name of named) {
    if (!oldColumns.has(name) || newColumns.has(name) || mentions(newText, name)) continue;
    const source = oldSources.find((output) => mentions(output.text, name));
    if (source !== undefined) vanished.push({ name, outputId: source.outputId });
  }
  return vanished;
}
