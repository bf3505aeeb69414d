import { z } from 'zod';
import { stripCodeFence } from '../code-fence.ts';
import { parseDataSection, parseInstruction } from '../first-message.ts';
import type { DataEntry } from '../first-message.ts';
import type { ChatMessage } from '../language-model.ts';
import { questionAfterStoppedTurnNote } from '../model-notes.ts';
import { stageOfCode } from './stages.ts';
import type { Stage } from './stages.ts';

/**
 * What the offline analyst knows at a turn, read from the messages alone (it
 * keeps no state between calls, so the same conversation always gives the
 * same next turn): the instruction and the profile from the first message,
 * and for each of its earlier cells the step it was, the Execute text it got
 * back, and what that text says (findings, facts, an error, lost state). In a
 * thread, a later question (`readLaterQuestion`) is either a follow-up of an
 * answer or, when every earlier question was stopped unanswered, the
 * question the analysis is now about.
 */

/** The `facts: {...}` line a cell prints last; every field optional, the text is untrusted. */
export const stepFactsSchema = z.object({
  stage: z.string(),
  tables: z.number().optional(),
  unique: z.number().optional(),
  focus: z.array(z.string()).optional(),
  kinds: z.record(z.string(), z.number()).optional(),
  failed: z.array(z.tuple([z.string(), z.string()])).optional(),
});
export type StepFacts = z.infer<typeof stepFactsSchema>;

export interface ExecutedStep {
  /** Null for an assistant turn the analyst did not write (no step header). */
  stage: Stage | null;
  /** Null when no execution result followed (the turn was the last message). */
  executeText: string | null;
  facts: StepFacts | null;
  /** The `- ` lines under `Findings:`, verbatim. */
  findings: string[];
  /** The exception class when the cell failed, e.g. `KeyError`. */
  errorName: string | null;
  /** The cell failed because the kernel's variables are gone (restart, or a NameError on a helper). */
  stateLost: boolean;
}

export interface OfflineConversation {
  /** The first message's instruction, or the later question that took its place (see `readConversation`). */
  instruction: string;
  entries: DataEntry[];
  steps: ExecutedStep[];
  /** A message after the last execution result that is not one (a nudge, a request for the final answer). */
  finishRequested: boolean;
}

const helperNames = [
  'fmt',
  'value_text',
  'md_text',
  'pct',
  'md',
  'kind_of',
  'kinds',
  'show_findings',
  'tables',
  'focus',
  'duplicates',
  'problems',
  'tidy',
  'register',
  'choose_focus',
  'clean_names',
  'count_of',
  'coerce_text',
  'promote_header',
  'looks_misread',
  'MAX_ROWS',
  'MISSING_MARKERS',
  'shape_of',
  'sampled',
  'reading_notes',
  'file_missing',
  'recovery_note',
];
const lostHelperPattern = new RegExp(`NameError: name '(?:${helperNames.join('|')})' is not defined`);
const restartPattern = /kernel (?:was |had to be )?restarted|state (?:was |is )?lost/i;
const errorNamePattern = /^([A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit))(?::|$)/m;

/** The text inside <Execute>…</Execute> when a chat profile wrapped it; else the message as it is. */
export function unwrapExecute(content: string): string {
  const match = /<Execute>([\s\S]*?)(?:<\/Execute>|$)/i.exec(content);
  return (match?.[1] ?? content).trim();
}

export function readFindings(executeText: string): string[] {
  const findings: string[] = [];
  const lines = executeText.split('\n');
  // The last one: show_findings prints it at the end, after any data the cell printed.
  const start = lines.findLastIndex((line) => line.trim() === 'Findings:');
  if (start < 0) return findings;
  for (const line of lines.slice(start + 1)) {
    if (!line.startsWith('- ')) break;
    findings.push(line.slice(2).trim());
  }
  return findings;
}

export function readFacts(executeText: string): StepFacts | null {
  const lines = [...executeText.matchAll(/^facts: (\{.*\})\s*$/gm)];
  const last = lines.at(-1)?.[1];
  if (last === undefined) return null;
  try {
    const parsed = stepFactsSchema.safeParse(JSON.parse(last));
    return parsed.success ? parsed.data : null;
  } catch {
    return null; // cut off by an output cap: as good as absent
  }
}

function readStep(code: string, executeText: string | null): ExecutedStep {
  const text = executeText ?? '';
  const errorName = /Traceback \(most recent call last\)|^\w+Error\b/m.test(text)
    ? (errorNamePattern.exec(text)?.[1] ?? 'Error')
    : null;
  return {
    stage: stageOfCode(code),
    executeText,
    facts: executeText === null ? null : readFacts(text),
    findings: executeText === null ? [] : readFindings(text),
    errorName,
    stateLost: lostHelperPattern.test(text) || restartPattern.test(text),
  };
}

/** A question of a thread after its first (the first is the first message's instruction). */
export interface LaterQuestion {
  question: string;
  /** The messages after it (this turn so far). */
  after: readonly ChatMessage[];
  /** An earlier question was answered (or the model asked back): this one follows up on that analysis. */
  followsAnswer: boolean;
}

const answerOrAskTag = /<Answer>|<Ask>/i;

/** The last paragraph of a question's message: notes the loop put before the question (a stop, a replay) are paragraphs of their own. */
function lastParagraph(content: string): string {
  return (
    content
      .split(/\n\s*\n/)
      .at(-1)
      ?.trim() ?? content.trim()
  );
}

/**
 * The question after the thread's stop note in a user message, or null. The
 * note is looked for only where the thread writes it: after the first
 * message's data section (whose lines are JSON, with no blank line), after
 * the last <Execute> output of results it is joined to, or anywhere in a
 * message of its own. A column name or a printed value that holds the note's
 * words is data, and never becomes the question.
 */
function questionInMessage(content: string, isFirst: boolean): string | null {
  if (isFirst) {
    const data = content.indexOf('\n\n# Data\n');
    const end = data === -1 ? -1 : content.indexOf('\n\n', data + 2);
    return end === -1 ? null : questionAfterStoppedTurnNote(content, end + 2);
  }
  if (/^\s*<Execute>/i.test(content)) {
    const close = content.lastIndexOf('</Execute>');
    return close === -1 ? null : questionAfterStoppedTurnNote(content, close + '</Execute>'.length);
  }
  return questionAfterStoppedTurnNote(content);
}

/**
 * The latest question after the first message, or null. A question is the
 * first user message after an answer or an <Ask>, or a message the thread
 * opens with its note that the previous question was stopped (so a question
 * asked after a cancel is never taken for the stopped cell's output).
 */
export function readLaterQuestion(messages: readonly ChatMessage[]): LaterQuestion | null {
  const firstIndex = messages.findIndex((message) => message.role === 'user');
  let latest: { index: number; question: string; followsAnswer: boolean } | null = null;
  let answered = false;
  let awaitingQuestion = false;
  // From the first message: a question asked after the first reply was stopped is joined to it for the wire.
  for (let index = firstIndex; index < messages.length; index += 1) {
    const message = messages[index];
    if (message?.role === 'assistant' && answerOrAskTag.test(message.content)) {
      answered = true;
      awaitingQuestion = true;
    } else if (message?.role === 'user') {
      const afterNote = questionInMessage(message.content, index === firstIndex);
      if (!awaitingQuestion && afterNote === null) continue;
      latest = { index, question: afterNote ?? lastParagraph(message.content), followsAnswer: answered };
      awaitingQuestion = false;
    }
  }
  if (latest === null) return null;
  return {
    question: latest.question,
    after: messages.slice(latest.index + 1),
    followsAnswer: latest.followsAnswer,
  };
}

function codeOfTurn(content: string): string {
  const match = /<Code>([\s\S]*?)(?:<\/Code>|$)/i.exec(content);
  return match?.[1] === undefined ? '' : stripCodeFence(match[1]);
}

/**
 * The conversation as the plan reads it. When the questions before the
 * latest were all stopped before an answer (the user cancelled the first
 * question and asked another), the analysis starts over for the latest: it
 * is the instruction, and only the cells run since it count. Nothing of the
 * stopped work goes into its answer, and a cell the stop cut short runs
 * again whole.
 */
export function readConversation(messages: readonly ChatMessage[]): OfflineConversation {
  const firstIndex = messages.findIndex((message) => message.role === 'user');
  const first = messages[firstIndex]?.content ?? '';
  const later = readLaterQuestion(messages);
  const restart = later !== null && !later.followsAnswer ? later : null;
  const steps: ExecutedStep[] = [];
  let finishRequested = false;
  let pendingCode: string | null = null;
  let resultSeen = false;
  for (const message of restart?.after ?? messages.slice(firstIndex + 1)) {
    if (message.role === 'assistant') {
      if (pendingCode !== null && !resultSeen) steps.push(readStep(pendingCode, null));
      pendingCode = codeOfTurn(message.content);
      resultSeen = false;
      finishRequested = false;
      continue;
    }
    if (message.role === 'system') continue;
    // The first message after a cell is its result: role `execute` (DeepAnalyze) or a
    // `user` message, normally wrapped in <Execute> (chat profiles).
    // A question after a stopped cell is no output of it (the stopped cell had none), unless its message
    // opens with the cell's <Execute> output (joined for the wire).
    const question = message.role === 'user' ? questionInMessage(message.content, false) : null;
    if (question !== null && !/^\s*<Execute>/i.test(message.content)) {
      if (pendingCode !== null && !resultSeen) steps.push(readStep(pendingCode, null));
      pendingCode = null;
      continue;
    }
    if (pendingCode !== null && !resultSeen && (message.role === 'execute' || message.role === 'user')) {
      steps.push(readStep(pendingCode, unwrapExecute(message.content)));
      resultSeen = true;
      continue;
    }
    // Anything else (a nudge, a request to answer now) asks the analyst to finish.
    finishRequested = true;
  }
  if (pendingCode !== null && !resultSeen) steps.push(readStep(pendingCode, null));
  return {
    instruction: restart?.question ?? parseInstruction(first),
    entries: parseDataSection(first),
    steps,
    finishRequested,
  };
}
