import { mkdtemp, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SandboxFailureError, WorkspaceError } from '../../src/errors/index.ts';
import { KernelConnection } from '../../src/sandbox/kernel-connection.ts';
import { listWorkspaceFiles, uploadWorkspaceFiles } from '../../src/sandbox/workspace-files.ts';
import { fakeKernel, readyMessage } from './support/fake-kernel.ts';

/**
 * Copying the workspace into the sandbox: the host never follows a link that
 * appeared after the listing, fails with WorkspaceError (not a raw Node
 * error) when a file cannot be read, and never waits forever on a
 * supervisor that stopped reading.
 */

const limits = { maxFiles: 100, maxTotalBytes: 1024 * 1024 };
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'datalyst-upload-'));
});

afterEach(async () => {
  vi.useRealTimers();
  await rm(dir, { recursive: true, force: true });
});

async function connectedKernel(answer: boolean) {
  const fake = fakeKernel((request) =>
    answer && request['type'] === 'write-file' ? { type: 'ok', id: request['id'] } : undefined,
  );
  const connection = new KernelConnection(fake.kernel);
  fake.reply(readyMessage);
  await connection.ready;
  const written = () =>
    fake.sent
      .filter((request) => request['type'] === 'write-file')
      .map((request) => [request['path'], Buffer.from(String(request['dataBase64']), 'base64').toString()]);
  return { connection, written };
}

describe('uploadWorkspaceFiles', () => {
  it('copies the listed files', async () => {
    await writeFile(join(dir, 'a.csv'), 'x,y\n1,2\n');
    const files = await listWorkspaceFiles(dir, limits);
    const { connection, written } = await connectedKernel(true);
    await uploadWorkspaceFiles(connection, files);
    expect(written()).toEqual([['a.csv', 'x,y\n1,2\n']]);
  });

  it('refuses a file swapped for a symbolic link after it was listed, without reading the link', async () => {
    await writeFile(join(dir, 'data.csv'), 'a\n1\n');
    await writeFile(join(dir, 'secret.txt'), 'host secret');
    const files = (await listWorkspaceFiles(dir, limits)).filter((file) => file.path === 'data.csv');
    await unlink(join(dir, 'data.csv'));
    await symlink(join(dir, 'secret.txt'), join(dir, 'data.csv'));
    const { connection, written } = await connectedKernel(true);
    const error = await uploadWorkspaceFiles(connection, files).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(WorkspaceError);
    expect((error as Error).message).toContain('symbolic link');
    expect(written()).toEqual([]);
  });

  it('fails with WorkspaceError when a listed file is gone', async () => {
    await writeFile(join(dir, 'gone.csv'), 'a\n1\n');
    const files = await listWorkspaceFiles(dir, limits);
    await unlink(join(dir, 'gone.csv'));
    const { connection } = await connectedKernel(true);
    const error = await uploadWorkspaceFiles(connection, files).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(WorkspaceError);
    expect((error as Error).message).toContain('gone.csv');
  });

  it('fails the session instead of hanging when the supervisor stops answering', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    await writeFile(join(dir, 'a.csv'), 'x\n1\n');
    const files = await listWorkspaceFiles(dir, limits);
    const { connection, written } = await connectedKernel(false);
    const uploading = uploadWorkspaceFiles(connection, files).catch((caught: unknown) => caught);
    // Reading the file is real I/O: wait until the request is out, then let a minute pass.
    while (written().length === 0) await new Promise((resolve) => setImmediate(resolve));
    await vi.advanceTimersByTimeAsync(61_000);
    const error = await uploading;
    expect(error).toBeInstanceOf(SandboxFailureError);
    expect((error as Error).message).toContain('did not answer');
  });
});
