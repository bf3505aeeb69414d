import type { AnalyzeOptions } from './analyze-options.ts';
import type { AgentEvent, AnalysisResult } from './events.ts';
import { assertAnalyzeOptions } from './options-schema.ts';
import { openThread } from './thread/thread.ts';

/**
 * Runs an analysis and streams what happens, as typed events: a thread of
 * one question, whose `<Ask>` gets a fixed reply (nobody is there to answer).
 * The stream always ends with `run-end` (errors arrive as `error` events
 * before it, and the result's `error` repeats the one that ended the run),
 * except after a bug in Datalyst: then it throws a DatalystError with code
 * INTERNAL_ERROR and fault `internal` once the sandbox is closed, and the
 * trace is left as a crash leaves it (no termination names a bug). The trace is on disk as it goes; breaking out of the iteration
 * cancels the run, closes the sandbox and ends the trace with `cancelled`.
 *
 * Throws on the first iteration, before any event and without writing
 * anything, when an option is wrong (ConfigError naming it, e.g. `maxRounds`
 * that is not a whole number above 0), the workspace folder is missing
 * (WorkspaceError) or the run folder already holds a trace (ConfigError).
 */
export async function* streamAnalysis(options: AnalyzeOptions): AsyncGenerator<AgentEvent, void, undefined> {
  assertAnalyzeOptions(options, 'streamAnalysis()');
  const { instruction, signal, ...threadOptions } = options;
  const thread = await openThread({ ...threadOptions, askMode: 'reply' });
  let summary;
  try {
    yield* thread.ask(instruction, signal === undefined ? {} : { signal });
  } finally {
    summary = await thread.close();
  }
  yield* summary.endNotices;
  const { turns: _turns, endNotices: _endNotices, ...result } = summary;
  yield { type: 'run-end', result };
}

/** Runs an analysis to its end and returns the result (see `streamAnalysis` for the events). */
export async function analyze(options: AnalyzeOptions): Promise<AnalysisResult> {
  assertAnalyzeOptions(options, 'analyze()');
  for await (const event of streamAnalysis(options)) {
    if (event.type === 'run-end') return event.result;
  }
  // streamAnalysis always ends with run-end; reaching here is a bug.
  throw new Error('streamAnalysis ended without run-end');
}
