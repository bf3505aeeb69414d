import type { CellResult, SandboxSession } from '../../sandbox/index.ts';
import { clipText } from '../clip-text.ts';
import type { AgentEvent, ReplaySummary } from '../events.ts';
import { replayNote } from '../model-notes.ts';
import type { ExecutedCell } from '../turn-handler.ts';

/** A recorded cell: what the replay runs again and checks its output against. */
export type RecordedCell = ExecutedCell;

/** Statuses whose cells are not run again: they hit a limit or were stopped, and would again. */
const notReplayed = new Set<RecordedCell['status']>([
  'timeout',
  'memory',
  'crashed',
  'output-limit',
  'cancelled',
]);

const quotedChars = 80;

function quote(text: string | null): string {
  return text === null ? 'nothing' : JSON.stringify(clipText(text, quotedChars));
}

/** How a cell's new result differs from the record, or null when it matches. */
export function outputDifference(cell: RecordedCell, result: CellResult): string | null {
  if (result.status !== cell.status) return `status ${cell.status} → ${result.status}`;
  if ((result.error?.name ?? null) !== cell.errorName)
    return `error ${cell.errorName ?? 'none'} → ${result.error?.name ?? 'none'}`;
  if (result.stdout.text !== cell.stdout)
    return `printed ${quote(cell.stdout)} → ${quote(result.stdout.text)}`;
  if (result.value !== cell.value) return `value ${quote(cell.value)} → ${quote(result.value)}`;
  return null;
}

/**
 * Runs a thread's recorded cells again, in order, in a fresh session (the
 * replay the notebook relies on too), and checks each output against the
 * record: status, error, what it printed and its value. Cells that had hit a
 * limit or been cancelled are skipped. A failing cell is a result here too;
 * only the session breaking (or the signal) throws.
 */
export async function* replayCells(
  session: SandboxSession,
  cells: readonly RecordedCell[],
  signal: AbortSignal,
): AsyncGenerator<AgentEvent, ReplaySummary, undefined> {
  const startedMs = performance.now();
  yield { type: 'replay-start', cells: cells.length };
  const summary: ReplaySummary = {
    cells: cells.length,
    replayed: 0,
    mismatches: [],
    skipped: [],
    durationMs: 0,
  };
  for (const cell of cells) {
    if (notReplayed.has(cell.status)) {
      summary.skipped.push({ outputId: cell.outputId, detail: `it ended ${cell.status} in the record` });
      continue;
    }
    const result = await session.execute(cell.code, { signal });
    summary.replayed += 1;
    const difference = outputDifference(cell, result);
    if (difference !== null) summary.mismatches.push({ outputId: cell.outputId, detail: difference });
  }
  summary.durationMs = performance.now() - startedMs;
  yield { type: 'replay-end', summary };
  return summary;
}

/**
 * What a replay is told as: the user's notice and the note for the model. When no cell was run again (the
 * only ones had been cancelled or hit a limit), neither speaks of cells run again or variables back: the
 * kernel is fresh ("the 0 earlier cells were run again … so the variables are back" was said).
 */
export function replayTexts(summary: ReplaySummary): { notice: string; modelNote: string } {
  const differences = summary.mismatches.map((item) => `${item.outputId}: ${item.detail}`);
  const skipped = summary.skipped.map((item) => `${item.outputId} (${item.detail})`);
  if (summary.replayed === 0) {
    return {
      notice:
        'The sandbox was started again; no recorded cell needed running again.' +
        (skipped.length === 0 ? '' : ` Not replayed: ${skipped.join('; ')}.`),
      modelNote:
        'The sandbox was restarted and no earlier cell was run again, so the kernel holds no variables from earlier cells.' +
        (skipped.length === 0 ? '' : ` Not run again: ${skipped.join('; ')}.`),
    };
  }
  const notice =
    `The sandbox was started again and ${summary.replayed} recorded cell${summary.replayed === 1 ? '' : 's'} replayed in ${Math.round(summary.durationMs)} ms; ` +
    (differences.length === 0
      ? 'every output matches the record.'
      : `${differences.length} output${differences.length === 1 ? ' differs' : 's differ'} from the record: ${differences.join('; ')}.`) +
    (skipped.length === 0 ? '' : ` Not replayed: ${skipped.join('; ')}.`);
  return { notice, modelNote: replayNote(summary.replayed, differences, skipped) };
}
