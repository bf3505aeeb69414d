import { mkdir, mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import { afterAll, describe, expect, it } from 'vitest';
import { WorkspaceError } from '../../src/errors/index.ts';
import { containerLabels, createSandbox, type SandboxSession } from '../../src/sandbox/index.ts';
import { createSandboxWithBackend } from '../../src/sandbox/create-sandbox.ts';
import { createDockerBackend } from '../../src/sandbox/docker-backend.ts';
import { hashTree } from '../support/hash-tree.ts';

/**
 * Inputs of real size: the workspace is mounted read-only (a bind on this
 * local engine; a volume filled over the Engine API when forced, as on a
 * remote engine), so it costs the sandbox no memory and has no per-file cap.
 */

const docker = new Docker();
const MIB = 1024 * 1024;
const temporaryDirs: string[] = [];

async function temporaryWorkspace(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'datalyst-inputs-'));
  temporaryDirs.push(dir);
  return dir;
}

/** A file of `sizeBytes` that takes no disk (a hole) and ends with a known line. */
async function sparseFile(path: string, sizeBytes: number, tail: string): Promise<void> {
  const handle = await open(path, 'w');
  try {
    await handle.truncate(sizeBytes - Buffer.byteLength(tail));
    await handle.write(tail, sizeBytes - Buffer.byteLength(tail));
  } finally {
    await handle.close();
  }
}

async function volumesOfSession(sessionId: string): Promise<string[]> {
  const listed = await docker.listVolumes({
    filters: { label: [`${containerLabels.session}=${sessionId}`] },
  });
  return (listed.Volumes ?? []).map((volume) => volume.Name);
}

afterAll(async () => {
  for (const dir of temporaryDirs) await rm(dir, { recursive: true, force: true });
});

describe('inputs of real size', () => {
  it('an input larger than the old 512 MiB per-file cap reaches the kernel', async () => {
    const workspace = await temporaryWorkspace();
    await sparseFile(join(workspace, 'huge.csv'), 600 * MIB, 'last,line\n');
    await using session = await createSandbox({ workspaceDir: workspace });
    const result = await session.execute(
      [
        'import os',
        'with open("huge.csv", "rb") as f:',
        '    f.seek(-10, os.SEEK_END)',
        '    tail = f.read()',
        '(os.path.getsize("huge.csv"), tail)',
      ].join('\n'),
    );
    expect(result.status).toBe('ok');
    expect(result.value).toBe(`(${600 * MIB}, b'last,line\\n')`);
  });

  it('a large input read in a small-memory session does not count against its memory (the copy did)', async () => {
    const workspace = await temporaryWorkspace();
    // Copied into the tmpfs, 700 MiB would not even fit a 512 MiB sandbox.
    await sparseFile(join(workspace, 'big.bin'), 700 * MIB, 'end');
    await using session = await createSandbox({ workspaceDir: workspace, limits: { memoryMb: 512 } });
    const result = await session.execute(
      [
        'total = 0',
        'with open("big.bin", "rb") as f:',
        '    for chunk in iter(lambda: f.read(1 << 22), b""):',
        '        total += len(chunk)',
        'total',
      ].join('\n'),
    );
    expect(result.status).toBe('ok');
    expect(result.value).toBe(String(700 * MIB));
  });

  it('reaches the kernel through a volume filled over the Engine API, read-only, removed with the session', async () => {
    const workspace = await temporaryWorkspace();
    await mkdir(join(workspace, 'nested', 'deeper'), { recursive: true });
    await writeFile(join(workspace, 'sales.csv'), 'region,amount\nnorth,10\nsouth,20\n');
    await writeFile(join(workspace, 'nested', 'deeper', 'notes.txt'), 'keep me');
    await writeFile(join(workspace, 'empty.csv'), '');
    const before = await hashTree(workspace);
    const backend = createDockerBackend({ inputTransfer: 'volume' });
    const session: SandboxSession = await createSandboxWithBackend(backend, { workspaceDir: workspace });
    let volumes: string[];
    try {
      volumes = await volumesOfSession(session.id);
      expect(volumes).toHaveLength(1);
      const read = await session.execute(
        [
          'import os, pandas as pd',
          'print(sorted(os.path.join(d, f) for d, _, fs in os.walk(".") for f in fs))',
          'print(os.readlink("sales.csv"))',
          'print(open("nested/deeper/notes.txt").read(), os.path.getsize("empty.csv"))',
          'pd.read_csv("sales.csv")["amount"].sum()',
        ].join('\n'),
      );
      expect(read.status).toBe('ok');
      expect(read.stdout.text).toBe(
        "['./empty.csv', './nested/deeper/notes.txt', './sales.csv']\n/mnt/inputs/sales.csv\nkeep me 0\n",
      );
      expect(read.value).toBe('np.int64(30)');
      expect(read.files).toEqual([]); // the links are not artifacts

      const hostile = await session.execute(
        [
          'import os, shutil',
          'try:',
          '    open("/mnt/inputs/sales.csv", "w")',
          'except OSError as error:',
          '    print(error.strerror)',
          'pd.DataFrame({"x": [1]}).to_csv("sales.csv", index=False)',
          'open("nested/deeper/notes.txt", "a").write(" and this")',
          'os.remove("empty.csv")',
          'shutil.rmtree("nested") if False else None',
          '(open("sales.csv").read(), open("nested/deeper/notes.txt").read(), sorted(os.listdir("/mnt/inputs")))',
        ].join('\n'),
      );
      expect(hostile.status).toBe('ok');
      expect(hostile.stdout.text).toBe('Read-only file system\n');
      expect(hostile.value).toBe("('x\\n1\\n', 'keep me and this', ['empty.csv', 'nested', 'sales.csv'])");
      expect(hostile.files.map((file) => file.path).sort()).toEqual(['nested/deeper/notes.txt', 'sales.csv']);
    } finally {
      await session.close();
    }
    expect(await hashTree(workspace)).toEqual(before);
    expect(await volumesOfSession(session.id)).toEqual([]);
  });

  it('a pooled session gets its workspace through its own volume, filled at acquire', async () => {
    const { createWarmPool } = await import('../../src/sandbox/warm-pool.ts');
    const workspace = await temporaryWorkspace();
    await writeFile(join(workspace, 'sales.csv'), 'region,amount\nnorth,10\nsouth,20\n');
    const pool = createWarmPool({ size: 1 });
    try {
      await using session = await pool.acquire({ workspaceDir: workspace });
      const result = await session.execute('import os\n(os.readlink("sales.csv"), open("sales.csv").read())');
      expect(result.value).toBe("('/mnt/inputs/sales.csv', 'region,amount\\nnorth,10\\nsouth,20\\n')");
      const profile = await session.profileWorkspace();
      expect(profile.files.map((file) => [file.path, file.sizeBytes])).toEqual([['sales.csv', 32]]);
    } finally {
      await pool.close();
    }
  });

  it('a workspace of 2000 files arrives whole', async () => {
    const workspace = await temporaryWorkspace();
    for (let folder = 0; folder < 20; folder += 1) {
      await mkdir(join(workspace, `part-${folder}`));
      await Promise.all(
        Array.from({ length: 100 }, (_, index) =>
          writeFile(join(workspace, `part-${folder}`, `file-${index}.csv`), `id,value\n${index},${folder}\n`),
        ),
      );
    }
    await using session = await createSandbox({ workspaceDir: workspace });
    const result = await session.execute(
      [
        'import os',
        'names = [os.path.join(d, f) for d, _, fs in os.walk(".") for f in fs]',
        '(len(names), open("part-19/file-99.csv").read())',
      ].join('\n'),
    );
    expect(result.value).toBe("(2000, 'id,value\\n99,19\\n')");
  });
});

describe('workspace limits', () => {
  async function sessionsOfThisProcess(): Promise<number> {
    const containers = await docker.listContainers({
      all: true,
      filters: { label: [`${containerLabels.ownerPid}=${process.pid}`] },
    });
    return containers.length;
  }

  it('a workspace above maxWorkspaceMb is refused before any container exists, naming the limit and its options', async () => {
    const workspace = await temporaryWorkspace();
    await sparseFile(join(workspace, 'data.csv'), 3 * MIB, 'x\n');
    const containersBefore = await sessionsOfThisProcess();
    const error = await createSandbox({ workspaceDir: workspace, limits: { maxWorkspaceMb: 2 } }).then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(WorkspaceError);
    const { message, fix } = error as WorkspaceError;
    expect(message).toContain("holds 3 MiB, more than the sandbox's limit of 2 MiB (maxWorkspaceMb)");
    expect(fix).toContain('--max-workspace-mb 3');
    expect(fix).toContain('DATALYST_MAX_WORKSPACE_MB=3');
    expect(await sessionsOfThisProcess()).toBe(containersBefore);
  });

  it('a workspace above maxWorkspaceFiles is refused, naming the limit and its variable', async () => {
    const workspace = await temporaryWorkspace();
    for (let index = 0; index < 5; index += 1) await writeFile(join(workspace, `f${index}.csv`), 'a\n');
    const error = await createSandbox({ workspaceDir: workspace, limits: { maxWorkspaceFiles: 3 } }).then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(WorkspaceError);
    expect((error as WorkspaceError).message).toContain(
      "more than 3 files, the sandbox's limit (maxWorkspaceFiles)",
    );
    expect((error as WorkspaceError).fix).toContain('DATALYST_MAX_WORKSPACE_FILES');
  });
});
