import { z } from 'zod';
import { stripCodeFence } from '../code-fence.ts';
import { parseDataSection, parseInstruction } from '../first-message.ts';
import type { DataEntry } from '../first-message.ts';
import type { ChatMessage } from '../language-model.ts';
import { questionAfterStoppedTurnNote } from '../model-notes.ts';
import {
  applyWorkspaceChangeNotes,
  readWorkspaceChangeNotes,
  type WorkspaceChangeNote,
} from '../workspace-change.ts';
import { stageOfCode } from './stages.ts';
import type { Stage } from './stages.ts';

/**
 * What the offline analyst knows at a turn, read from the messages alone (it
 * keeps no state between calls, so the same conversation always gives the
 * same next turn): the instruction and the profile from the first message,
 * and for each of its earlier cells the step it was, the Execute text it got
 * back, and what that text says (findings, facts, an error, lost state). In a
 * thread, a later question (`readLaterQuestion`) is either a follow-up of an
 * answer or, when every earlier question was stopped unanswered or found no
 * data, the question the analysis is now about. The thread's notes on a
 * changed workspace (files added, changed, removed between questions) update
 * the first message's files (`currentEntries`) and mark a question as the stop
 * note does.
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
  /** The first message's files, with the thread's notes on a changed workspace applied. */
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
 * Where the thread writes its notes in a user message: after the first
 * message's data section (whose lines are JSON, with no blank line), after
 * the last <Execute> output of results it is joined to, or anywhere in a
 * message of its own; -1 when nowhere. A column name or a printed value that
 * holds a note's words is data, and never becomes a question or a file.
 */
function noteSearchStart(content: string, isFirst: boolean): number {
  if (isFirst) {
    const data = content.indexOf('\n\n# Data\n');
    const end = data === -1 ? -1 : content.indexOf('\n\n', data + 2);
    return end === -1 ? -1 : end + 2;
  }
  if (/^\s*<Execute>/i.test(content)) {
    const close = content.lastIndexOf('</Execute>');
    return close === -1 ? -1 : close + '</Execute>'.length;
  }
  return 0;
}

/**
 * The question after the thread's notes in a user message, or null when the
 * message holds none: after the stop note (the previous question was
 * stopped), else after the last note on a changed workspace (files came
 * before this question; a thread whose first question found no data writes
 * one into the message that holds the first).
 */
function questionInMessage(content: string, isFirst: boolean): string | null {
  const from = noteSearchStart(content, isFirst);
  if (from === -1) return null;
  const afterStop = questionAfterStoppedTurnNote(content, from);
  if (afterStop !== null) return afterStop;
  const changed = readWorkspaceChangeNotes(content, from).at(-1);
  return changed === undefined ? null : content.slice(changed.end).trim();
}

/** The thread's notes on a changed workspace in one message, where it writes them. */
function changeNotesInMessage(content: string, isFirst: boolean): WorkspaceChangeNote[] {
  const from = noteSearchStart(content, isFirst);
  return from === -1 ? [] : readWorkspaceChangeNotes(content, from);
}

/** The files the workspace holds as the thread last told: the first message's, with every change note applied. */
export function currentEntries(messages: readonly ChatMessage[]): DataEntry[] {
  const firstIndex = messages.findIndex((message) => message.role === 'user');
  const notes = messages.flatMap((message, index) =>
    message.role === 'user' && index >= firstIndex
      ? changeNotesInMessage(message.content, index === firstIndex)
      : [],
  );
  return applyWorkspaceChangeNotes(parseDataSection(messages[firstIndex]?.content ?? ''), notes);
}

/** Files the workspace gained or changed (to load) and lost (to forget) since the last answer or <Ask>. */
export interface WorkspaceGain {
  load: DataEntry[];
  removed: string[];
}

/**
 * What the notes since the last answer or <Ask> say came, changed or went:
 * a follow-up's kernel holds the tables of the files as they were, so these
 * are loaded (or forgotten) first. Null when nothing changed since. Notes
 * before a turn that answered were that turn's to load, and a replay runs
 * its cells again.
 */
export function workspaceGainSinceAnswer(messages: readonly ChatMessage[]): WorkspaceGain | null {
  const firstIndex = messages.findIndex((message) => message.role === 'user');
  const lastAnswer = messages.findLastIndex(
    (message) => message.role === 'assistant' && answerOrAskTag.test(message.content),
  );
  const load = new Map<string, DataEntry>();
  const removed = new Set<string>();
  messages.forEach((message, index) => {
    if (message.role !== 'user' || index <= lastAnswer || index < firstIndex) return;
    for (const note of changeNotesInMessage(message.content, index === firstIndex)) {
      for (const entry of note.removed) {
        load.delete(entry.name);
        removed.add(entry.name);
      }
      for (const entry of [...note.changed, ...note.added]) {
        removed.delete(entry.name);
        load.set(entry.name, entry);
      }
    }
  });
  return load.size + removed.size === 0 ? null : { load: [...load.values()], removed: [...removed] };
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
    entries: currentEntries(messages),
    steps,
    finishRequested,
  };
}
