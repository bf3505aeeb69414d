import { chmod, mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import { extract } from 'tar-stream';
import type Docker from 'dockerode';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, WorkspaceError } from '../../src/errors/index.ts';
import {
  containerCreateBody,
  defaultSandboxLimits,
  readSandboxEnvironment,
} from '../../src/sandbox/index.ts';
import { chooseInputTransfer, readableBySandboxUser } from '../../src/sandbox/input-transfer.ts';
import { workspaceTar } from '../../src/sandbox/input-volume.ts';
import { checkCopyLimits, listWorkspaceFiles } from '../../src/sandbox/workspace-files.ts';

/** Inputs of real size, without Docker: settings, the mount, the tar, the limits. */

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'datalyst-inputs-unit-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const unlimited = { maxFiles: 100, maxTotalBytes: 1024 ** 3 };

describe('input settings', () => {
  it('read DATALYST_INPUT_TRANSFER and the workspace limits from the environment', () => {
    const environment = readSandboxEnvironment({
      DATALYST_INPUT_TRANSFER: 'volume',
      DATALYST_MAX_WORKSPACE_MB: '4096',
      DATALYST_MAX_WORKSPACE_FILES: '50000',
    });
    expect(environment.inputTransfer).toBe('volume');
    expect(environment.limits).toEqual({ maxWorkspaceMb: 4096, maxWorkspaceFiles: 50000 });
    expect(() => readSandboxEnvironment({ DATALYST_INPUT_TRANSFER: 'nfs' })).toThrow(ConfigError);
  });

  it('mount the inputs read-only outside the working directory and tell the kernel where', () => {
    const base = { sessionId: 's', image: 'i', limits: defaultSandboxLimits, nowMs: 0 };
    const bind = containerCreateBody({ ...base, inputs: { type: 'bind', source: '/data/my work' } });
    expect((bind['HostConfig'] as Record<string, unknown>)['Mounts']).toEqual([
      {
        Type: 'bind',
        Source: '/data/my work',
        Target: '/mnt/inputs',
        ReadOnly: true,
        BindOptions: { Propagation: 'rprivate' },
      },
    ]);
    expect(bind['Env']).toContain('DATALYST_INPUTS_ROOT=/mnt/inputs');
    const volume = containerCreateBody({ ...base, inputs: { type: 'volume', volume: 'datalyst-inputs-s' } });
    expect((volume['HostConfig'] as Record<string, unknown>)['Mounts']).toEqual([
      {
        Type: 'volume',
        Source: 'datalyst-inputs-s',
        Target: '/mnt/inputs',
        ReadOnly: true,
        VolumeOptions: { NoCopy: true },
      },
    ]);
    const none = containerCreateBody(base);
    expect((none['HostConfig'] as Record<string, unknown>)['Mounts']).toBeUndefined();
    expect(none['Env']).not.toContain('DATALYST_INPUTS_ROOT=/mnt/inputs');
  });
});

describe('the volume tar', () => {
  it('holds every listed file and its folders, owned by root and read-only to others, exactly as listed', async () => {
    await mkdir(join(dir, 'a', 'b'), { recursive: true });
    await writeFile(join(dir, 'a', 'b', 'c.csv'), 'x,y\n1,2\n');
    await writeFile(join(dir, 'empty.txt'), '');
    await writeFile(join(dir, 'top.csv'), 'top\n');
    const files = await listWorkspaceFiles(dir, unlimited);
    const entries: {
      name: string;
      type: string | null | undefined;
      mode: number | undefined;
      uid: number | undefined;
      body: string;
    }[] = [];
    const unpack = extract();
    unpack.on('entry', (header, stream, next) => {
      void buffer(stream).then((body) => {
        entries.push({
          name: header.name,
          type: header.type,
          mode: header.mode,
          uid: header.uid,
          body: body.toString(),
        });
        next();
      });
    });
    const done = new Promise((resolve) => unpack.on('finish', resolve));
    workspaceTar(files).pipe(unpack);
    await done;
    expect(entries).toEqual([
      { name: 'a', type: 'directory', mode: 0o755, uid: 0, body: '' },
      { name: 'a/b', type: 'directory', mode: 0o755, uid: 0, body: '' },
      { name: 'a/b/c.csv', type: 'file', mode: 0o644, uid: 0, body: 'x,y\n1,2\n' },
      { name: 'empty.txt', type: 'file', mode: 0o644, uid: 0, body: '' },
      { name: 'top.csv', type: 'file', mode: 0o644, uid: 0, body: 'top\n' },
    ]);
  });

  it('fails with a WorkspaceError when a file shrank after it was listed', async () => {
    await writeFile(join(dir, 'data.csv'), 'a long line\n');
    const files = await listWorkspaceFiles(dir, unlimited);
    await writeFile(join(dir, 'data.csv'), 'a\n');
    const tar = workspaceTar(files);
    const failure = await new Promise<unknown>((resolve) => {
      tar.on('error', resolve);
      tar.resume();
    });
    expect(failure).toBeInstanceOf(WorkspaceError);
  });
});

describe('input limits', () => {
  it('refuse, before the copy, a file above the file-size limit where the workspace is copied (local backend)', async () => {
    await writeFile(join(dir, 'big.csv'), Buffer.alloc(3 * 1024 * 1024));
    const files = await listWorkspaceFiles(dir, unlimited);
    expect(() => checkCopyLimits(files, { ...defaultSandboxLimits, maxFileBytes: 1024 * 1024 })).toThrow(
      /big\.csv \(3 MiB\) is larger than the sandbox's file-size limit of 1 MiB \(maxFileBytes\)/,
    );
    expect(() => checkCopyLimits(files, defaultSandboxLimits)).not.toThrow();
  });

  it('bind only when the sandbox user (uid 1000) can read every file and search every folder', async () => {
    if (process.getuid?.() !== 0) return; // mode bits do not stop root; as another user the files are its own
    await mkdir(join(dir, 'sub'));
    await writeFile(join(dir, 'sub', 'open.csv'), 'a\n');
    await chmod(dir, 0o755);
    const files = await listWorkspaceFiles(dir, unlimited);
    expect(await readableBySandboxUser({ dir, files })).toBe(true);
    await chmod(join(dir, 'sub', 'open.csv'), 0o600);
    expect(await readableBySandboxUser({ dir, files })).toBe(false);
    await chmod(join(dir, 'sub', 'open.csv'), 0o644);
    await chmod(join(dir, 'sub'), 0o700);
    expect(await readableBySandboxUser({ dir, files })).toBe(false);
  });
});

describe('folders left out of a bound workspace', () => {
  it('are hidden under an empty read-only tmpfs each: real folders only, outermost only', async () => {
    await writeFile(join(dir, 'sales.csv'), 'a\n');
    await mkdir(join(dir, 'run', 'sub'), { recursive: true });
    await mkdir(join(dir, 'elsewhere'));
    await symlink(join(dir, 'elsewhere'), join(dir, 'link'));
    await writeFile(join(dir, 'file'), 'x\n');
    const excludeDirs = ['run', 'run/sub', 'link', 'file', '../outside', 'run'];
    const files = await listWorkspaceFiles(dir, { ...unlimited, excludeDirs });
    // 'bind' asks nothing of the engine.
    const noEngine = {} as Docker;
    const chosen = await chooseInputTransfer(noEngine, { dir, files, excludeDirs }, 'bind');
    expect(chosen).toEqual({ type: 'bind', source: await realpath(dir), hidden: ['run'] });
    // A left-out folder not made yet would show through a bind once made: 'auto' copies instead.
    const later = [...excludeDirs, 'not-yet'];
    expect(await chooseInputTransfer(noEngine, { dir, files, excludeDirs: later }, 'auto')).toEqual({
      type: 'volume',
    });
    // So does a name no mount can take ('../outside' is no workspace path): it could not be hidden.
    expect(
      await chooseInputTransfer(noEngine, { dir, files, excludeDirs: ['run', '../outside'] }, 'auto'),
    ).toEqual({ type: 'volume' });

    const base = { sessionId: 's', image: 'i', limits: defaultSandboxLimits, nowMs: 0 };
    const body = containerCreateBody({
      ...base,
      inputs: { type: 'bind', source: '/data', hidden: ['run', 'a/b'] },
    });
    expect((body['HostConfig'] as Record<string, unknown>)['Mounts']).toEqual([
      expect.objectContaining({ Type: 'bind', Source: '/data', Target: '/mnt/inputs', ReadOnly: true }),
      {
        Type: 'tmpfs',
        Target: '/mnt/inputs/run',
        ReadOnly: true,
        TmpfsOptions: { SizeBytes: 4096, Mode: 0o555 },
      },
      {
        Type: 'tmpfs',
        Target: '/mnt/inputs/a/b',
        ReadOnly: true,
        TmpfsOptions: { SizeBytes: 4096, Mode: 0o555 },
      },
    ]);
  });
});
