import path from 'node:path';
import { defaultSandboxLimits, readSandboxEnvironment, resolveSandboxLimits } from '../sandbox/index.ts';
import type { SandboxEnvironment, SandboxLimits, SandboxSession } from '../sandbox/index.ts';
import { TRACE_VERSION, type InputFile, type RunStartRecord } from '../trace/schema.ts';
import type { AnalyzeOptions } from './analyze-options.ts';
import type { ModelProfile } from './model-profile.ts';
import { datalystVersion } from './run-metadata.ts';

export interface RunStartInput {
  options: AnalyzeOptions;
  runId: string;
  startedAt: string;
  inputFiles: InputFile[];
  profile: ModelProfile;
  maxRounds: number;
  deadlineMs: number | null;
  contextBudgetTokens: number;
  /** The open session, or null when it could not be opened. */
  session: SandboxSession | null;
}

/** The environment's sandbox settings, or none when they are malformed (opening the session reports that). */
function environmentOrNothing(): SandboxEnvironment | null {
  try {
    return readSandboxEnvironment();
  } catch {
    return null;
  }
}

/**
 * The limits the session has, or, when it could not be opened, the ones it
 * would have had: defaults, the DATALYST_* environment, the caller's values,
 * as createSandbox resolves them. When those are malformed (the reason the
 * session did not open, which run-end names), the defaults.
 */
function effectiveLimits(options: AnalyzeOptions, session: SandboxSession | null): Readonly<SandboxLimits> {
  if (session !== null) return session.limits;
  const environment = environmentOrNothing();
  if (environment === null) return defaultSandboxLimits;
  try {
    return resolveSandboxLimits(options.sandbox?.limits, environment);
  } catch {
    return defaultSandboxLimits;
  }
}

/**
 * The runner image, for the trace: the one the session says it started from
 * (null for the local backend). When no session opened, only an image the
 * caller chose is known; createSandbox's default is not worked out again.
 */
function imageOf(options: AnalyzeOptions, session: SandboxSession | null): string | null {
  if (session?.image !== undefined) return session.image;
  return options.sandbox?.image ?? null;
}

/**
 * The OCI runtime, for the trace: the session's; when no session opened, the
 * one it would have had (the caller's, DATALYST_RUNTIME, runc); none for the
 * local backend.
 */
function runtimeOf(options: AnalyzeOptions, session: SandboxSession | null, backend: string): string | null {
  if (session?.runtime !== undefined) return session.runtime;
  if (backend !== 'docker') return null;
  return options.sandbox?.runtime ?? environmentOrNothing()?.runtime ?? 'runc';
}

/** The trace's first record: what was asked, of which data, with which model, under which limits. */
export function runStartRecord(input: RunStartInput): RunStartRecord {
  const { options, session } = input;
  const limits = effectiveLimits(options, session);
  const sandboxBackend =
    session?.backend ?? options.sandbox?.backend ?? environmentOrNothing()?.backend ?? 'docker';
  const runtime = runtimeOf(options, session, sandboxBackend);
  return {
    type: 'run-start',
    version: TRACE_VERSION,
    runId: input.runId,
    startedAt: input.startedAt,
    instruction: options.instruction,
    workspace: { path: path.resolve(options.workspaceDir), files: input.inputFiles },
    model: {
      id: options.model.id,
      profile: options.model.offline === true ? 'offline' : input.profile.name,
      baseUrl: options.model.baseUrl ?? null,
      offline: options.model.offline === true,
    },
    limits: {
      maxRounds: input.maxRounds,
      cellTimeoutMs: limits.cellTimeoutMs,
      memoryMb: limits.memoryMb,
      cpus: limits.cpus,
      deadlineMs: input.deadlineMs,
      contextBudgetTokens: input.contextBudgetTokens,
    },
    environment: {
      datalystVersion,
      nodeVersion: process.version,
      sandboxBackend,
      image: imageOf(options, session),
      ...(runtime === null ? {} : { runtime }),
    },
  };
}
