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

export function outcomePresentation(view: RunView): OutcomePresentation {
  const reason = view.end?.termination.reason ?? view.turns.at(-1)?.termination?.reason ?? null;
  if (view.outcome === 'answered') return { look: 'answered', verdict: '', happened: null, todo: null };
  const happened = view.outcomeMessage;
  if (view.outcome === 'incomplete') {
    return {
      look: 'incomplete',
      verdict: 'Incomplete',
      happened,
      todo: 'If the run crashed, run it again (the steps below are kept); if it is still going, render the report again when it ends (datalyst report <run folder>).',
    };
  }
  if (view.outcome === 'cancelled') {
    return {
      look: 'cancelled',
      verdict: 'Cancelled',
      happened,
      todo: 'Run the analysis again to get an answer; what was done before the cancel is below.',
    };
  }
  if (reason === 'asked') {
    return {
      look: 'asked',
      verdict: 'Waiting for a reply',
      happened,
      todo: 'Reply to the question (datalyst chat, or the web UI) and the analysis goes on.',
    };
  }
  if (reason === 'no-data') {
    return {
      look: 'no-data',
      verdict: 'No data',
      // The detail names each file and why it could not be read; it already says that nothing was analysed.
      happened:
        detailOf(view) ?? 'No file in the workspace held data that could be read. Nothing was analysed.',
      todo: 'Put the data files (CSV, Excel, JSON, SQLite or Parquet) in the workspace folder, or point the analysis at the folder that holds them, and run it again. What was found is listed under Data.',
    };
  }
  return {
    look: 'failed',
    verdict: 'Failed',
    happened,
    todo: reason === null ? null : failureTodo(reason),
  };
}

function detailOf(view: RunView): string | null {
  const detail = view.end?.termination.detail.trim() ?? '';
  return detail === '' ? null : detail;
}

function failureTodo(reason: Parameters<typeof terminationLabel>[0]): string {
  switch (reason) {
    case 'max-rounds':
      return 'Ask a narrower question or allow more rounds (--max-rounds); the partial results below are kept.';
    case 'context-budget':
      return 'Ask a narrower question or allow a larger context budget; the partial results below are kept.';
    case 'deadline':
      return 'Allow more time (--deadline) or ask a narrower question; the partial results below are kept.';
    case 'no-progress':
    case 'repeated-failure':
      return 'Open the last rounds of the process below to see what failed, then rephrase the instruction or fix the data and run again.';
    case 'model-unavailable':
      return 'Check the model endpoint, its key and the network (datalyst analyze --help), then run again.';
    case 'sandbox-failure':
      return 'Check that Docker is running and the runner image is built (npm run setup), then run again.';
    default:
      return 'Open the process below to see what happened, then run again.';
  }
}
