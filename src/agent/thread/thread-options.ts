import type { WorkspaceProfile } from '../../sandbox/index.ts';
import type { AnalyzeOptions } from '../analyze-options.ts';

/**
 * A conversation on one workspace: the same options as a run, less the
 * instruction (each question is asked with `ask()`) and the run's signal
 * (each question takes its own). Limits that a run applies to the whole run
 * apply to each turn here: `maxRounds` and `deadlineMs` are per question;
 * `contextBudgetTokens` is the thread's (the conversation carries over).
 *
 * @example
 * const thread = await openThread({ workspaceDir: 'data', model: createOfflineAnalyst() });
 * const first = await thread.ask('Which region sells more?').result;
 * const turn = thread.ask('Now split it by month.');
 * for await (const event of turn) if (event.type === 'text-delta') process.stdout.write(event.text);
 * console.log((await turn.result).termination.reason);
 * await thread.close(); // writes run-end and trace.json; renderRunFolder(thread.outDir) for the report
 */
export interface ThreadOptions extends Omit<AnalyzeOptions, 'instruction' | 'signal'> {
  /**
   * What the model's `<Ask>` does: `pause` ends the turn as `asked` and the
   * next `ask()` carries the user's reply; `reply` answers it with a fixed
   * message (no more information; make a reasonable assumption and state it)
   * and the turn goes on, as in a one-shot run. Default `pause`.
   */
  askMode?: 'pause' | 'reply';
  /**
   * Closes the sandbox after this long without a question, to free its
   * memory; the next `ask()` opens a fresh one and replays the recorded cells
   * first. Null for never. Default null.
   */
  idleTimeoutMs?: number | null;
  /**
   * What a workspace with no file at all does: `stop` ends each question
   * `no-data` before the model is asked (the CLI's guard against an answer
   * about nothing); `ask-model` sends it to the model, whose first message
   * says there are no data files (a chat without data, as DeepAnalyze's
   * "Simple Chat (No Files)"). Files that cannot be read end `no-data`
   * either way. Default `stop`.
   */
  whenNoFiles?: 'stop' | 'ask-model';
  /** Cancels opening the thread (hashing the workspace). Each question takes its own signal. */
  signal?: AbortSignal;
  /**
   * The profile of this same workspace, already made in a sandbox (a deep
   * run profiles once and opens a thread per sub-analysis): the first
   * question uses it instead of profiling every file again. It is recorded in
   * the trace as the thread's own.
   */
  workspaceProfile?: WorkspaceProfile;
}

/**
 * Resuming a thread from its run folder. The workspace, instruction, limits
 * and conversation come from the trace; the model is the caller's (a trace
 * holds no keys). Other fields override what the trace recorded.
 */
export interface ResumeThreadOptions extends Omit<
  ThreadOptions,
  'workspaceDir' | 'outDir' | 'runsDir' | 'runId' | 'workspaceProfile'
> {
  /** The data folder. Default the one the trace recorded; before the first question its files are compared with the trace's inputs, and a change is recorded, profiled and told to the model. */
  workspaceDir?: string;
}

/** Options of one question. */
export interface AskOptions {
  /** Cancels this turn only: the running cell is interrupted (variables kept), the turn ends `cancelled`, the thread stays usable. */
  signal?: AbortSignal;
}
