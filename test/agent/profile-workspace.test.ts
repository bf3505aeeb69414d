import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { profileWorkspace } from '../../src/index.ts';
import type { SandboxFactory } from '../../src/index.ts';
import { createFakeSandbox, testProfile } from './support/fake-session.ts';

describe('profileWorkspace: a workspace profiled before any question, in a sandbox of its own', () => {
  let workspaceDir: string;
  beforeEach(async () => {
    workspaceDir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-profile-workspace-'));
    await writeFile(path.join(workspaceDir, 'sales.csv'), 'region,total\nnorth,18\n');
  });
  afterEach(async () => {
    await rm(workspaceDir, { recursive: true, force: true });
  });

  it('opens a session on the workspace, returns its profile and closes the session', async () => {
    const sandbox = createFakeSandbox();
    const profile = await profileWorkspace({
      workspaceDir,
      createSandbox: sandbox.factory,
      sandbox: { excludeDirs: ['runs'] },
    });
    expect(profile).toEqual(testProfile);
    expect(sandbox.sessions).toHaveLength(1);
    expect(sandbox.sessions[0]?.openedWith.workspaceDir).toBe(workspaceDir);
    expect(sandbox.sessions[0]?.openedWith.excludeDirs).toEqual(['runs']);
    expect(sandbox.sessions[0]?.closed).toBe(true);
    expect(sandbox.sessions[0]?.executed).toEqual([]);
  });

  it('closes the session when profiling fails, and the failure reaches the caller', async () => {
    const sandbox = createFakeSandbox();
    const failing: SandboxFactory = async (options) => {
      const session = await sandbox.factory(options);
      return Object.assign(Object.create(session) as typeof session, {
        profileWorkspace: () => Promise.reject(new Error('the kernel died')),
        close: () => session.close(),
      });
    };
    await expect(profileWorkspace({ workspaceDir, createSandbox: failing })).rejects.toThrow(
      'the kernel died',
    );
    expect(sandbox.sessions[0]?.closed).toBe(true);
  });
});
