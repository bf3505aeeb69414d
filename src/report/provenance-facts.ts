import type { InputFileEntry } from '../trace/input-files.ts';
import { formatDuration, formatUtcTime } from './report-format.ts';
import type { RunView } from './run-view.ts';
import { terminationLabel } from './run-view.ts';

/**
 * The provenance lines that differ between one run and a conversation, as
 * plain text (each format escapes it). A thread resumed by `--continue` or a
 * new chat records one `run-end` per session: its last one alone is neither the
 * thread's duration (shorter than its cells) nor a termination of the whole
 * conversation, only of its last question.
 */
export function terminationFact(view: RunView): [label: string, text: string] {
  const thread = view.turns.length > 1 || view.open;
  const last = view.turns.at(-1);
  const ending = view.end?.termination ?? (view.open ? (last?.termination ?? null) : null);
  if (!thread) {
    return [
      'Termination',
      ending === null
        ? 'none recorded (the trace ends before the run did)'
        : describe(ending, view.start.rerunOf !== undefined),
    ];
  }
  const open = view.open ? ' The conversation is still open: more questions can follow.' : '';
  if (ending === null) {
    return [
      'Last question',
      `question ${last?.turn ?? view.turns.length} has not ended in the trace (still running, or its process stopped)`,
    ];
  }
  return ['Last question', `${describe(ending)}${open}`];
}

/** The run's duration; a conversation's is its sessions' added up. */
export function durationFact(view: RunView): string {
  const { ended, durationMs } = view.sessions;
  if (view.turns.length <= 1 && !view.open && ended <= 1)
    return view.durationMs === null ? 'unknown' : formatDuration(view.durationMs);
  const sessions =
    ended === 0
      ? 'no session has ended yet'
      : `${formatDuration(durationMs)} over ${ended} session${ended === 1 ? '' : 's'} (each from its start to its close)`;
  return `${sessions}${view.end === null ? ', and the current one is still open' : ''}`;
}

/** Said after the time in cells and in the model: in a conversation, they count every question's. */
export function totalsScope(view: RunView): string {
  return view.turns.length > 1 ? ', all questions' : '';
}

/** When the run ended (see formatUtcTime); an open conversation has not. */
export function endedFact(view: RunView): string {
  if (view.end !== null) return formatUtcTime(view.end.endedAt);
  return view.open ? 'not yet: the conversation is still open' : 'unknown';
}

function describe(
  termination: { reason: Parameters<typeof terminationLabel>[0]; detail: string },
  rerun = false,
): string {
  const { reason, detail } = termination;
  // "Answered in round 19." says it all; "answered: Answered in round 19." said it twice.
  if (reason === 'answered' && /^answered\b/i.test(detail)) return `a${detail.slice(1)}`;
  // A re-run ends no-progress when the run it re-ran had no answer: nothing stalled (run-view.ts says the same).
  const meaning = rerun && reason === 'no-progress' ? 'nothing to carry over' : terminationLabel(reason);
  const label = reason === 'answered' ? 'answered' : `${reason} (${meaning})`;
  return `${label}${detail ? `: ${detail}` : ''}`;
}

/** The round limit counts per question: "21 of at most 30" misread a conversation's 21 rounds over 5 questions. */
export function roundsFact(view: RunView): string {
  const limit = view.start.limits.maxRounds;
  return view.turns.length > 1
    ? `${view.rounds} over ${view.turns.length} questions (at most ${limit} per question)`
    : `${view.rounds} of at most ${limit}`;
}

/** True when a thread's workspace changed between questions: the input files table then says when each came. */
export function inputsChanged(view: RunView): boolean {
  return view.inputFiles.some((file) => file.change !== 'start');
}

/** When an input file was listed: at the start, or added, changed (its new hash) or removed (its last) before a question. */
export function inputFileWhen(file: InputFileEntry): string {
  if (file.change === 'start') return 'at the start';
  return `${file.change} before question ${file.beforeTurn ?? '?'}`;
}
