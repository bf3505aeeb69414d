import type { RunView } from './run-view.ts';
import type { terminationLabel } from './run-view.ts';

/**
 * How a run's ending looks in a report, from the title down: a word for the
 * title, a colour band, what happened and what to do. An answered run and a
 * failed one must never be mistaken for each other.
 */
export type OutcomeLook = 'answered' | 'failed' | 'cancelled' | 'no-data' | 'incomplete' | 'asked';

export interface OutcomePresentation {
  look: OutcomeLook;
  /** Shown above the title and put before it in the page title ("Failed: …"); '' when answered. */
  verdict: string;
  /** What happened, one sentence; null when answered. */
  happened: string | null;
  /** What the reader can do about it; null when answered. */
  todo: string | null;
}

/**
 * Who acts on the advice: `cli`, the person at the command line (commands,
 * flags, the workspace folder); `server`, someone asking `datalyst serve`
 * (the web UI or a program), who asks again in the thread and does not run
 * the server's commands.
 */
export type ReportAudience = 'cli' | 'server';

export function outcomePresentation(view: RunView, audience: ReportAudience = 'cli'): OutcomePresentation {
  const server = audience === 'server';
  const reason = view.end?.termination.reason ?? view.turns.at(-1)?.termination?.reason ?? null;
  if (view.outcome === 'answered') return { look: 'answered', verdict: '', happened: null, todo: null };
  const happened = view.outcomeMessage;
  if (view.outcome === 'incomplete') {
    return {
      look: 'incomplete',
      verdict: 'Incomplete',
      happened,
      todo: server
        ? 'If the server stopped during this question, ask it again in the thread (the steps below are kept); if it is still going, open the report again when it ends.'
        : 'If the run crashed, run it again (the steps below are kept); if it is still going, render the report again when it ends (datalyst report <run folder>).',
    };
  }
  if (view.outcome === 'cancelled') {
    return {
      look: 'cancelled',
      verdict: 'Cancelled',
      happened,
      todo: server
        ? 'Ask again in the thread to get an answer; what was done before the cancel is below.'
        : 'Run the analysis again to get an answer; what was done before the cancel is below.',
    };
  }
  if (reason === 'asked') {
    return {
      look: 'asked',
      verdict: 'Waiting for a reply',
      happened,
      todo: server
        ? 'Reply to the question in the thread and the analysis goes on.'
        : 'Reply to the question (datalyst chat, or the web UI) and the analysis goes on.',
    };
  }
  if (reason === 'no-data') return { look: 'no-data', verdict: 'No data', ...noDataStory(view, audience) };
  const rerunWithoutAnswer = view.start.rerunOf !== undefined && reason === 'no-progress';
  return {
    look: 'failed',
    verdict: 'Failed',
    happened,
    todo: rerunWithoutAnswer
      ? 'Analyse the new data afresh (`datalyst analyze`): a re-run carries an earlier answer over, and the run it re-ran had none.'
      : reason === null
        ? null
        : failureTodo(reason, audience),
  };
}

const dataFormats = new Set(['csv', 'excel', 'json', 'sqlite', 'parquet']);

/**
 * What happened when no file could be read, from the workspace profile: the
 * data files that are there but could not be read (damaged, say) and why, in
 * the reader's words; or that no file is in a format Datalyst reads. The
 * run's detail is a fallback only: it repeats "nothing was analysed" and
 * carries the readers' hints to programmers ("you must specify an engine").
 */
function noDataStory(view: RunView, audience: ReportAudience): { happened: string; todo: string } {
  const files = view.profile?.files ?? [];
  const unread = files.filter((file) => file.tables.length === 0 && dataFormats.has(file.format));
  if (unread.length > 0) {
    const named = unread
      .slice(0, 5)
      .map((file) => `${file.path} (${file.error === null ? 'no table in it' : readerMessage(file.error)})`);
    const more = unread.length > 5 ? `; and ${unread.length - 5} more` : '';
    return {
      happened: `${unread.length === 1 ? 'The data file' : 'No data file'} of the workspace could ${unread.length === 1 ? 'not ' : ''}be read, so nothing was analysed: ${named.join('; ')}${more}.`,
      todo: `The ${unread.length === 1 ? 'file' : 'files'} listed under Data could not be read: check that ${unread.length === 1 ? 'it opens' : 'they open'} in the program that made ${unread.length === 1 ? 'it' : 'them'}, repair or export ${unread.length === 1 ? 'it' : 'them'} again (CSV, Excel, JSON, SQLite or Parquet), and ${audience === 'server' ? `attach ${unread.length === 1 ? 'it' : 'them'} to your next question (this conversation looks at its files again before each question) or to a new analysis` : 'run the analysis again'}.`,
    };
  }
  // Files in formats Datalyst does not read (a PDF, a text file); files with a table would contradict the ending.
  const found = files
    .filter((file) => file.tables.length === 0)
    .map((file) => `${file.path} (${file.format})`);
  const detail = view.end?.termination.detail.trim() ?? '';
  return {
    happened:
      found.length > 0
        ? `No file of the workspace holds data in a format Datalyst reads, so nothing was analysed; it holds ${found.slice(0, 5).join(', ')}${found.length > 5 ? ` and ${found.length - 5} more` : ''}.`
        : detail === ''
          ? 'No file in the workspace held data that could be read, so nothing was analysed.'
          : sentence(readerMessage(detail)),
    todo:
      audience === 'server'
        ? 'Attach the data files (CSV, Excel, JSON, SQLite or Parquet) to your next question: this conversation looks at its files again before each question. What was found is listed under Data.'
        : 'Put the data files (CSV, Excel, JSON, SQLite or Parquet) in the workspace folder, or point the analysis at the folder that holds them, and run it again. What was found is listed under Data.',
  };
}

/**
 * A reader's error for a person: without the exception's class name
 * ("ValueError: ") and the hints meant for the programmer who calls the
 * reader (", you must specify an engine manually"), and without a final
 * period (the sentence around it has its own).
 */
export function readerMessage(error: string): string {
  return error
    .replace(/^[A-Z][A-Za-z0-9_.]*: /, '')
    .replace(/,\s*you (?:must|should|need to|can|may) [^;.]*/gi, '')
    .replace(/[\s.]+$/, '');
}

function sentence(text: string): string {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

/**
 * What to do after a run that ended without an answer, for each audience: the
 * command line's user can change its flags and setup; someone asking a server
 * asks again (the limits, the model and the sandbox are its operator's).
 */
function failureTodo(reason: Parameters<typeof terminationLabel>[0], audience: ReportAudience): string {
  const serverLimits =
    "Ask a narrower question in the thread; the partial results below are kept. The limits are the server's settings.";
  const advice = ((): Record<ReportAudience, string> => {
    switch (reason) {
      case 'max-rounds':
        return {
          cli: 'Ask a narrower question or allow more rounds (--max-rounds); the partial results below are kept.',
          server: serverLimits,
        };
      case 'context-budget':
        return {
          cli: 'Ask a narrower question or allow a larger context budget; the partial results below are kept.',
          server: serverLimits,
        };
      case 'deadline':
        return {
          cli: 'Allow more time (--deadline) or ask a narrower question; the partial results below are kept.',
          server: serverLimits,
        };
      case 'no-progress':
      case 'repeated-failure':
        return {
          cli: 'Open the last rounds of the process below to see what failed, then rephrase the instruction or fix the data and run again.',
          server:
            'Open the last rounds of the process below to see what failed, then ask again in other words, or upload a repaired file.',
        };
      case 'model-unavailable':
        return {
          cli: 'Check the model endpoint, its key and the network (datalyst analyze --help), then run again.',
          server:
            "The server could not reach its model: ask again later, or ask the server's operator to check its model endpoint and key.",
        };
      case 'sandbox-failure':
        return {
          cli: 'Check that Docker is running and the runner image is built (npm run setup), then run again.',
          server:
            "The server's sandbox failed: ask again later, or ask the server's operator to check Docker and the runner image.",
        };
      case 'rerun-cell-failed':
        return {
          cli: 'See in the process below where the new data stopped fitting the recorded cells: a cell that failed names what it lacks (a renamed or missing column, another type). Give the new files the recorded shape and re-run, or analyse them afresh with `datalyst analyze`.',
          server:
            'See in the process below where the new data stopped fitting the recorded cells: a cell that failed names what it lacks (a renamed or missing column, another type).',
        };
      default:
        return {
          cli: 'Open the process below to see what happened, then run again.',
          server: 'Open the process below to see what happened, then ask again in the thread.',
        };
    }
  })();
  return advice[audience];
}
