import type { TerminationReason } from '../trace/schema.ts';
import type { ParsedStep } from './tag-parser.ts';

/**
 * What the loop tells the model, in one place: the wording is part of the
 * protocol (models follow it), so tests and reports can refer to it.
 */

/** Why an unclosed <Code> block was not run. */
export function unclosedCodeNote(step: ParsedStep, finishReason: string | null): string {
  if (finishReason === 'length') {
    return 'Your reply reached the token limit inside a <Code> block, so that code was not run. Write shorter code (split the work into several cells).';
  }
  if (step.fenceOpen && step.raw.trimEnd().endsWith('</Code>')) {
    return 'Your code contains the text </Code>, which ends a code block, so the code was cut there and not run. Build such strings from parts, e.g. "</" + "Code>".';
  }
  return 'Your <Code> block was not closed with </Code>, so it was not run. Close each code block with </Code>.';
}

/** After a turn with neither code to run nor an answer. */
export const continueNudge =
  'Continue the analysis: write a <Code> block to run next, or give your final <Answer> if the results so far support it.';

/** After the same code failed again; `what` names the error. */
export function repeatedFailureNudge(what: string): string {
  return `The same code failed again (${what}). Running it unchanged will fail the same way: change the approach (check names, types and the file's layout first).`;
}

/** Once, when the conversation nears the context budget. */
export const finalAnswerRequest =
  'The conversation is close to the context limit. Write your final <Answer> now, from the results so far. Do not write more code.';

/** Once, before the last round the run allows. */
export const lastRoundAnswerRequest =
  'This is your last turn: the run has reached its limit of rounds. Write your final <Answer> now, from the results so far. Do not write more code.';

/** The reply to an <Ask> when nobody can answer (a one-shot run): the model goes on with a stated assumption. */
export const askUnansweredReply =
  'No one can answer your question in this run, and no more information is available. Make a reasonable assumption, state it in your analysis and in your answer, and continue.';

/** Told to the model before the first question after a thread resumed in a fresh sandbox. */
export function replayNote(
  replayed: number,
  differences: readonly string[],
  skipped: readonly string[],
): string {
  const parts = [
    `The sandbox was restarted and the ${replayed} earlier cell${replayed === 1 ? ' was' : 's were'} run again in order, so the variables are back.`,
  ];
  if (differences.length > 0) {
    parts.push(
      `These outputs now differ from the ones you saw: ${differences.join('; ')}. Check before relying on them.`,
    );
  } else {
    parts.push('Their outputs match the ones you saw.');
  }
  if (skipped.length > 0) parts.push(`Not run again: ${skipped.join('; ')}.`);
  return parts.join(' ');
}

/** When a new question cannot fit in what is left of the thread's context budget. */
export function threadFullText(tokens: number, budget: number): string {
  return `The conversation of this thread (about ${tokens} tokens) leaves no room for another question within its budget of ${budget} tokens. Start a new thread (a new run) to ask it.`;
}

/** How a turn that ended without an answer ended, as the note before the next question opens. */
const stoppedTurnOpenings: Readonly<Partial<Record<TerminationReason, string>>> = {
  cancelled: 'The user cancelled the previous question before it was answered',
  deadline: 'The previous question reached its time limit before it was answered',
  'max-rounds': 'The previous question reached its limit of rounds before it was answered',
  'context-budget': 'The previous question filled the context budget before it was answered',
  'no-progress': 'The previous question was stopped for making no progress before it was answered',
  'repeated-failure':
    'The previous question was stopped after its cells failed again and again, before it was answered',
  'model-unavailable': 'The previous question was not answered: the model could not be reached',
  'sandbox-failure': 'The previous question was not answered: the sandbox failed',
};
const stoppedTurnNoteEnd = "answer the user's new question, which follows.";

/**
 * Opens the user message of the question after a turn that ended without an
 * answer (the user's cancel, a limit, a failure); null after a turn that
 * answered, asked back or found no data. Without it the model, and the
 * offline analyst (`questionAfterStoppedTurnNote`), take the new question for
 * more of the stopped work, or for the output of the cell that was stopped.
 */
export function stoppedTurnNote(reason: TerminationReason, cellStopped: boolean): string | null {
  const opening = stoppedTurnOpenings[reason];
  if (opening === undefined) return null;
  const cell = cellStopped ? '; the cell that was running was stopped, so it has no output here' : '';
  return `${opening}${cell}. Do not go on with that question unless the user asks for it: ${stoppedTurnNoteEnd}`;
}

/**
 * The question in a user message that holds a `stoppedTurnNote` beginning at
 * a paragraph start at or after `from` (the text after the note), or null.
 * The caller says from where: the note is looked for only where the thread
 * writes it, never inside data or cell output, which could forge it.
 */
export function questionAfterStoppedTurnNote(content: string, from = 0): string | null {
  for (let start = from; start !== -1 && start < content.length;) {
    const atParagraph = start === 0 || content.startsWith('\n\n', start - 2);
    if (
      atParagraph &&
      Object.values(stoppedTurnOpenings).some((opening) => content.startsWith(opening, start))
    ) {
      const end = content.indexOf(stoppedTurnNoteEnd, start);
      return end === -1 ? null : content.slice(end + stoppedTurnNoteEnd.length).trim();
    }
    const next = content.indexOf('\n\n', start);
    start = next === -1 ? -1 : next + 2;
  }
  return null;
}
