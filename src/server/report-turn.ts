import { z } from 'zod';
import type { ThreadService } from './thread-service.ts';
import type { TurnRecord } from './thread-store.ts';

/** The library's `turn-start` as a turn's log keeps it: only the number the trace gave the turn. */
const turnStartEventSchema = z.object({ type: z.literal('turn-start'), turn: z.number().int().positive() });

/**
 * The turn of the thread's trace whose end a server turn's report shows.
 * The trace numbers only the questions that reached the analysis, so its
 * numbers part from the server's `index` once a turn ended before that
 * (cancelled while queued, interrupted before it ran, its sandbox could not
 * be reopened): such a turn added nothing, and its report is the thread as of
 * the last turn before it that did. The number comes from the library's
 * `turn-start` in the turn's event log, written after the trace's own record.
 * Null when no turn up to `index` reached the analysis.
 */
export async function reportTraceTurn(
  threads: ThreadService,
  threadId: string,
  turns: readonly TurnRecord[],
  index: number,
): Promise<number | null> {
  const earlier = turns.filter((turn) => turn.index <= index).sort((a, b) => b.index - a.index);
  for (const turn of earlier) {
    const traceTurn = await traceTurnOf(threads, threadId, turn.index);
    if (traceTurn !== null) return traceTurn;
  }
  return null;
}

async function traceTurnOf(threads: ThreadService, threadId: string, index: number): Promise<number | null> {
  for await (const event of threads.eventsSoFar(threadId, index)) {
    const start = turnStartEventSchema.safeParse(event);
    if (start.success) return start.data.turn;
  }
  return null;
}
