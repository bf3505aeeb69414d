import type { TraceRecord, TurnEndRecord } from './schema.ts';

/** One question of a thread and the records it brought, as read from a trace. */
export interface TraceTurn {
  turn: number;
  question: string;
  /** True when the question replied to the model's `<Ask>`. */
  replyToAsk: boolean;
  /** The turn's records in order, without its `turn-start` and `turn-end`. */
  records: TraceRecord[];
  /** Null when the trace ends inside the turn (still running, or the process died). */
  end: TurnEndRecord | null;
}

/**
 * Splits a trace into its turns. A version 1 trace (and whatever a version 2
 * trace holds before its first `turn-start`) is turn 1, whose question is the
 * run's instruction. `run-start`, `workspace-profile`, `replay`,
 * `workspace-change` and `run-end` records are kept in the turn they fall in
 * (a replay or a change found before a question falls in the turn before
 * it), so nothing is lost.
 */
export function splitTurns(records: readonly TraceRecord[]): TraceTurn[] {
  const start = records[0];
  const instruction = start?.type === 'run-start' ? start.instruction : '';
  const turns: TraceTurn[] = [];
  let current: TraceTurn | null = null;
  for (const record of records) {
    if (record.type === 'turn-start') {
      // A first turn-start after records of its own (a v1 trace resumed) opens turn 2.
      current = {
        turn: record.turn,
        question: record.question,
        replyToAsk: record.replyToAsk,
        records: [],
        end: null,
      };
      turns.push(current);
      continue;
    }
    if (current === null) {
      if (record.type === 'run-start' || record.type === 'workspace-profile') continue;
      current = { turn: 1, question: instruction, replyToAsk: false, records: [], end: null };
      turns.push(current);
    }
    if (record.type === 'turn-end') current.end = record;
    else current.records.push(record);
  }
  return turns;
}
