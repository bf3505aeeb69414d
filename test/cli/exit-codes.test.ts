import { describe, expect, it } from 'vitest';
import {
  CancelledError,
  ConfigError,
  DatalystError,
  ImageMissingError,
  ModelUnavailableError,
  SandboxFailureError,
  SandboxUnavailableError,
  TraceError,
  WorkspaceError,
} from '../../src/index.ts';
import { terminationReasonSchema } from '../../src/trace/index.ts';
import {
  ExitCode,
  exitCodeForError,
  exitCodeForTermination,
  exitCodeHelp,
} from '../../src/cli/exit-codes.ts';

describe('exit codes', () => {
  it('tell answered, not answered, sandbox, model and cancelled runs apart', () => {
    const expected: Record<string, number> = {
      answered: 0,
      asked: 3,
      'max-rounds': 3,
      'context-budget': 3,
      deadline: 3,
      'no-progress': 3,
      'repeated-failure': 3,
      'no-data': 3,
      'rerun-cell-failed': 3,
      'sandbox-failure': 4,
      'model-unavailable': 5,
      cancelled: 130,
    };
    // Every termination reason of the trace schema has a code (a new one must be added here).
    for (const reason of terminationReasonSchema.options) {
      expect(exitCodeForTermination(reason), reason).toBe(expected[reason]);
    }
  });

  it('count an answer given when asked at the round or context limit as answered', () => {
    expect(exitCodeForTermination('max-rounds', true)).toBe(0);
    expect(exitCodeForTermination('context-budget', true)).toBe(0);
    expect(exitCodeForTermination('deadline', true)).toBe(3);
  });

  it('map errors by code, then by fault', () => {
    expect(exitCodeForError(new WorkspaceError('x', 'y'))).toBe(ExitCode.usage);
    expect(exitCodeForError(new ConfigError('x', 'y'))).toBe(ExitCode.usage);
    expect(exitCodeForError(new TraceError('x'))).toBe(ExitCode.usage);
    expect(exitCodeForError(new SandboxUnavailableError('x', { fix: 'y' }))).toBe(
      ExitCode.sandboxUnavailable,
    );
    // The local backend says "not built" as the user's fault, but it is still the sandbox that is unavailable.
    expect(exitCodeForError(new SandboxUnavailableError('x', { fix: 'y', fault: 'user' }))).toBe(
      ExitCode.sandboxUnavailable,
    );
    expect(exitCodeForError(new ImageMissingError('img'))).toBe(ExitCode.sandboxUnavailable);
    expect(exitCodeForError(new SandboxFailureError('x'))).toBe(ExitCode.sandboxUnavailable);
    expect(exitCodeForError(new ModelUnavailableError('x', { fix: 'y' }))).toBe(ExitCode.modelUnavailable);
    expect(exitCodeForError(new CancelledError())).toBe(ExitCode.cancelled);
    expect(exitCodeForError(new DatalystError('NEW_KIND', 'x', { fix: 'y', fault: 'third-party' }))).toBe(
      ExitCode.modelUnavailable,
    );
    expect(exitCodeForError(new DatalystError('NEW_KIND', 'x', { fix: 'y', fault: 'system' }))).toBe(
      ExitCode.sandboxUnavailable,
    );
    expect(exitCodeForError(new DatalystError('NEW_KIND', 'x', { fix: 'y', fault: 'internal' }))).toBe(
      ExitCode.internal,
    );
    expect(exitCodeForError(new TypeError('bug'))).toBe(ExitCode.internal);
  });

  it('are all documented in the help text', () => {
    for (const code of Object.values(ExitCode)) expect(exitCodeHelp).toMatch(new RegExp(`^  ${code} `, 'm'));
  });
});
