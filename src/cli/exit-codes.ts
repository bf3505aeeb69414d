import { DatalystError } from '../errors/index.ts';
import type { DeepTerminationReason, TerminationReason } from '../index.ts';

/**
 * The process exit codes, decided here and nowhere else: from a run's
 * termination reason, or from the error that stopped the command (by its
 * `code`, then its `fault`).
 */
export const ExitCode = {
  /** The run ended with an answer (or another command succeeded). */
  answered: 0,
  /** A bug in Datalyst. */
  internal: 1,
  /** Bad arguments, configuration, workspace or output folder: the message says what to change. */
  usage: 2,
  /** The run ended without an answer: max rounds, deadline, context budget, no progress, repeated failures, no readable data, a re-run's cell failed on the new data. */
  notAnswered: 3,
  /** Docker (or the runner image, or the local Python) is not usable. */
  sandboxUnavailable: 4,
  /** The model endpoint could not be reached or does not serve the model. */
  modelUnavailable: 5,
  /** Ctrl-C (or SIGTERM). 128 + SIGINT, as shells report it. */
  cancelled: 130,
} as const;
export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

export function exitCodeForTermination(reason: TerminationReason, hasAnswer = false): ExitCodeValue {
  switch (reason) {
    case 'answered':
      return ExitCode.answered;
    case 'cancelled':
      return ExitCode.cancelled;
    case 'model-unavailable':
      return ExitCode.modelUnavailable;
    case 'sandbox-failure':
      return ExitCode.sandboxUnavailable;
    case 'max-rounds':
    case 'context-budget':
      // The loop asks for a final answer before these limits: one given is an answer.
      return hasAnswer ? ExitCode.answered : ExitCode.notAnswered;
    case 'asked':
    case 'deadline':
    case 'no-progress':
    case 'repeated-failure':
    case 'no-data':
    case 'rerun-cell-failed':
      return ExitCode.notAnswered;
  }
}

const exitCodeByErrorCode: Readonly<Record<string, ExitCodeValue>> = {
  CANCELLED: ExitCode.cancelled,
  MODEL_UNAVAILABLE: ExitCode.modelUnavailable,
  SANDBOX_UNAVAILABLE: ExitCode.sandboxUnavailable,
  SANDBOX_FAILURE: ExitCode.sandboxUnavailable,
  IMAGE_MISSING: ExitCode.sandboxUnavailable,
};

export function exitCodeForError(error: unknown): ExitCodeValue {
  if (!DatalystError.isInstance(error)) return ExitCode.internal;
  const byCode = exitCodeByErrorCode[error.code];
  if (byCode !== undefined) return byCode;
  switch (error.fault) {
    case 'user':
      return ExitCode.usage;
    case 'system':
      return ExitCode.sandboxUnavailable;
    case 'third-party':
      return ExitCode.modelUnavailable;
    case 'internal':
      return ExitCode.internal;
  }
}

/** The table shown by `--help` (and pasted into the README). */
export const exitCodeHelp = `Exit codes:
  0    answered (the run ended with an answer; other commands: success)
  1    internal error (a bug in Datalyst)
  2    usage or input error (arguments, config, workspace, output folder)
  3    ran but did not answer (max rounds, deadline, context budget, no progress,
       no readable data)
  4    sandbox unavailable (Docker engine, runner image, local Python)
  5    model unavailable (endpoint unreachable, model not served)
  130  cancelled (Ctrl-C)`;

/**
 * The exit codes one command can end with, each with what it means for that
 * command, as its `--help` shows them (a script calling `datalyst doctor`
 * should not have to read about answers and rounds).
 */
export function exitCodeHelpFor(codes: readonly (readonly [ExitCodeValue, string])[]): string {
  const width = Math.max(...codes.map(([code]) => String(code).length)) + 2;
  return `Exit codes:\n${codes.map(([code, meaning]) => `  ${String(code).padEnd(width)}${meaning}`).join('\n')}`;
}

/**
 * The exit code of a deep run (`analyze --deep`), by how it ended: as the
 * single run's where the names match. A report written after a budget was
 * spent is an answer; the deadline's forced report is not (as the loop's
 * deadline). A `failed` run takes the code of the error behind it.
 */
export function exitCodeForDeepTermination(
  reason: DeepTerminationReason,
  sectionsWritten: number,
  error: unknown = null,
): ExitCodeValue {
  switch (reason) {
    case 'answered':
      return ExitCode.answered;
    case 'max-sub-analyses':
    case 'token-budget':
      return sectionsWritten > 0 ? ExitCode.answered : ExitCode.notAnswered;
    case 'cancelled':
      return ExitCode.cancelled;
    case 'failed':
      return error === null ? ExitCode.notAnswered : exitCodeForError(error);
    case 'deadline':
    case 'asked':
    case 'no-data':
      return ExitCode.notAnswered;
  }
}
