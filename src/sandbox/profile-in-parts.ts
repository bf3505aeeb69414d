import type { SandboxSession } from './sandbox.ts';
import { mergeProfileParts, type WorkspaceProfile } from './workspace-profile.ts';

/**
 * The workspace's profile made by several sessions of the same workspace at
 * once, a part of the files each (`profileWorkspace({ part })`). When the
 * parts do not make one whole (the workspace changed between the kernels'
 * listings), the first session profiles it all. One session: one profile.
 */
export async function profileInParts(
  sessions: readonly SandboxSession[],
  options: { signal?: AbortSignal } = {},
): Promise<WorkspaceProfile> {
  const [first] = sessions;
  if (first === undefined) throw new RangeError('profileInParts: no session.');
  if (sessions.length === 1) return first.profileWorkspace(options);
  const count = sessions.length;
  const parts = await Promise.all(
    sessions.map((session, index) => session.profileWorkspace({ ...options, part: { index, count } })),
  );
  return mergeProfileParts(parts) ?? first.profileWorkspace(options);
}
