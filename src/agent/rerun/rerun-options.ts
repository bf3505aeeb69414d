import type { SandboxOptions } from '../../sandbox/index.ts';
import type { AnalyzeOptions } from '../analyze-options.ts';
import type { AgentEvent, AnalysisResult } from '../events.ts';
import type { LanguageModel } from '../language-model.ts';
import type { NumberUpdate } from './answer-numbers.ts';

/**
 * A re-run: the recorded cells of `runDir` executed again, in order, on the
 * files of `workspaceDir`, in a fresh sandbox, with no model (unless
 * `rewriteAnswer`). Writes a new run folder; the earlier run and the
 * workspace are only read.
 *
 * @example
 * const result = await rerunAnalysis({ runDir: 'runs/20260101-sales', workspaceDir: 'data/q2' });
 * console.log(result.termination.reason, result.numbers.stale);
 */
export interface RerunOptions {
  /** The earlier run folder (its `trace.jsonl`, or `trace.json`). */
  runDir: string;
  /**
   * The new data: a folder holding, under the same names, every file the earlier run read as data (its
   * profile found a table in it); text files it did not read as data may be missing.
   */
  workspaceDir: string;
  /** The new run folder; must not hold a trace. Default `<runsDir>/<runId>`. One inside `workspaceDir` is left out of its files. */
  outDir?: string;
  /** Where run folders go when `outDir` is not given. Default `runs` under the current directory. */
  runsDir?: string;
  /** Default: a timestamp and a random suffix. */
  runId?: string;
  /** Opens the sandbox session. Default `createSandbox` (Docker, `DATALYST_SANDBOX`). */
  createSandbox?: AnalyzeOptions['createSandbox'];
  /** Passed to `createSandbox` (backend, image, limits, folders left out of the workspace). */
  sandbox?: Omit<SandboxOptions, 'workspaceDir' | 'signal'> | undefined;
  /**
   * Makes the sandbox ready once the cheap checks have passed (the run folder
   * and its trace, the new workspace's files, the new run folder) and before
   * anything is written: the place for slow ones (the CLI checks the Docker
   * engine and the runner image here), so that a mistyped folder is named
   * before them. Resolves to the runner image to use, or undefined for
   * `sandbox.image` (or the default). A rejection rejects `rerunAnalysis`,
   * with nothing written. Default: none.
   */
  prepareSandbox?: (signal: AbortSignal) => Promise<string | undefined>;
  /**
   * Rewrites the answer with this model in one turn (question, earlier answer,
   * new outputs) instead of carrying its numbers over. Default: no model.
   */
  rewriteAnswer?: { model: LanguageModel };
  /** Caps on the files copied out of the sandbox. Default 64 MiB and 200 files. */
  maxArtifactBytes?: number;
  maxArtifactFiles?: number;
  /** Bytes of figures and charts kept in the trace. Default 96 MiB. */
  maxTraceFigureBytes?: number;
  /** Each event as it happens (the same events as `streamAnalysis`: progress for a CLI). */
  onEvent?: (event: AgentEvent) => void;
  /** Cancels: the running cell is interrupted, the session closed, the trace ended `cancelled`. */
  signal?: AbortSignal;
}

/** How one recorded cell fared on the new data. */
export interface RerunCell {
  outputId: string;
  /** `not-run`: after a failed cell, or skipped because it had hit a limit in the record. */
  status: 'ok' | 'error' | 'timeout' | 'memory' | 'crashed' | 'output-limit' | 'cancelled' | 'not-run';
  /** The status it had in the earlier run. */
  recordedStatus: string;
  /** For a failed cell: the error (`KeyError: 'region'`); for a skipped one: why. */
  detail: string | null;
}

export interface RerunResult extends AnalysisResult {
  /** The earlier run: its id, folder and the SHA-256 of its trace as read. */
  rerunOf: { runId: string; runDir: string; traceSha256: string };
  cells: RerunCell[];
  /** The first cell that had run and now failed (the `rerun-cell-failed` ending), or null. */
  failedCell: RerunCell | null;
  /** How the answer was made: the earlier one with its numbers carried over, or a model's rewrite. */
  answerSource: 'carried-over' | 'rewritten' | 'none';
  /** Each number of the earlier answer and what became of it (empty for a rewritten answer). */
  numbers: NumberUpdate[];
}
