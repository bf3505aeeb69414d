import { hasClosedFence } from './tag-parser.ts';
import type { ParsedStep } from './tag-parser.ts';

/**
 * An unclosed `<Code>` that is still complete: its ``` fence was opened and
 * closed, and the reply ended on the model's own end of turn (finish reason
 * `stop`; vLLM's `stop_reason` then null or the end-of-turn token id) or at a
 * model-written `<Execute>`. DeepAnalyze's API server appends `</Code>` to
 * such a turn and runs the code; the loop does the same, with a notice. Code
 * cut by the token limit (`length`) or with a fence still open is not run.
 */
export function isCompleteUnclosedCode(
  step: ParsedStep,
  finishReason: string | null,
  cutAtExecute: boolean,
): boolean {
  if (step.kind !== 'code' || step.closed || step.fenceOpen || step.text.length === 0) return false;
  if (!hasClosedFence(step.raw)) return false;
  return finishReason === 'stop' || cutAtExecute;
}

export const completeUnclosedCodeNotice =
  "The model ended its turn inside <Code> after a closed ``` fence (no </Code>); the code was complete, so it was run as DeepAnalyze's own server does.";
