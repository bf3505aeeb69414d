import { createSandbox } from '../sandbox/index.ts';
import type { SandboxOptions, WorkspaceProfile } from '../sandbox/index.ts';
import type { SandboxFactory } from './analyze-options.ts';

export interface ProfileWorkspaceOptions {
  /** The folder whose files are profiled (mounted read-only in the sandbox). */
  workspaceDir: string;
  /** How the sandbox is made; default the Docker sandbox. */
  createSandbox?: SandboxFactory;
  sandbox?: Omit<SandboxOptions, 'workspaceDir' | 'signal'>;
  signal?: AbortSignal;
}

/**
 * Profiles a workspace before any question: per file its tables (sheets),
 * columns with their kinds, sample values and reading notes ("read as
 * latin-1"). The files are untrusted, so they are parsed inside a sandbox
 * session of their own, closed before this returns; it is the same profile a
 * thread's first question starts from (`profile-end`).
 */
export async function profileWorkspace(options: ProfileWorkspaceOptions): Promise<WorkspaceProfile> {
  const session = await (options.createSandbox ?? createSandbox)({
    ...options.sandbox,
    workspaceDir: options.workspaceDir,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  try {
    return await session.profileWorkspace(options.signal === undefined ? {} : { signal: options.signal });
  } finally {
    await session.close();
  }
}
