/**
 * How an ended turn reads in its header: a word and a look taken from why it
 * ended, not from its record's status alone. A turn the server records as
 * `finished` may still have read no data or stopped at a limit; it must not
 * look like an answer (as the report's outcome band, src/report/outcome-look.ts).
 */
export type TurnLook = 'answered' | 'asked' | 'no-data' | 'stopped' | 'failed' | 'cancelled';

export interface TurnOutcome {
  look: TurnLook;
  /** The first word(s) of the status line, before the server's detail. */
  label: string;
}

/** Limits that stop a turn early; it may still carry the answer the model gave when asked to finish. */
const stoppedReasons = new Set([
  'max-rounds',
  'context-budget',
  'deadline',
  'no-progress',
  'repeated-failure',
  'rerun-cell-failed',
]);

export function turnOutcome(status: string, reason: string): TurnOutcome {
  if (status === 'cancelled') return { look: 'cancelled', label: 'cancelled' };
  if (status === 'interrupted') return { look: 'failed', label: 'interrupted' };
  if (status !== 'finished') return { look: 'failed', label: status };
  if (reason === 'answered') return { look: 'answered', label: 'answered' };
  if (reason === 'asked') return { look: 'asked', label: 'waiting for your reply' };
  if (reason === 'no-data') return { look: 'no-data', label: 'no data' };
  if (stoppedReasons.has(reason)) return { look: 'stopped', label: 'stopped early' };
  return { look: 'failed', label: 'failed' };
}
