import { execFileSync } from 'node:child_process';
import { chmod, mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DatalystError } from '../../src/index.ts';
import { checkWorkspace } from '../../src/cli/workspace-check.ts';
import { removeTemporaryDirs, temporaryDir } from './support/cli-harness.ts';

afterEach(removeTemporaryDirs);

const cap = { maxTotalBytes: 10 * 1024 * 1024 };

async function rejection(promise: Promise<unknown>): Promise<DatalystError> {
  try {
    await promise;
  } catch (error) {
    if (DatalystError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected the check to fail');
}

describe('workspace check', () => {
  it('lists data files and what is skipped, with reasons', async () => {
    const dir = await temporaryDir();
    await mkdir(path.join(dir, 'sub'));
    await writeFile(path.join(dir, 'sales.csv'), 'a,b\n1,2\n');
    await writeFile(path.join(dir, 'sub', 'book.XLSX'), 'not really excel');
    await writeFile(path.join(dir, 'README.md'), '# notes');
    await writeFile(path.join(dir, 'slides.pdf'), '%PDF');
    await writeFile(path.join(dir, 'Makefile'), 'all:');
    await symlink('/etc/passwd', path.join(dir, 'passwords.csv'));
    const check = await checkWorkspace(dir, cap);
    expect(check.dataFiles.map((entry) => entry.path)).toEqual(['sales.csv', 'sub/book.XLSX']);
    expect(Object.fromEntries(check.skipped.map((entry) => [entry.path, entry.reason]))).toEqual({
      Makefile: 'unsupported type (no extension)',
      'passwords.csv': 'a symbolic link (not followed; copy the file in instead)',
      'slides.pdf': 'unsupported type (.pdf)',
    });
    expect(check.entries.find((entry) => entry.path === 'README.md')?.kind).toBe('text');
    expect(check.totalBytes).toBe(8 + 16 + 7 + 4 + 4);
  });

  it('refuses a missing folder', async () => {
    const dir = await temporaryDir();
    const error = await rejection(checkWorkspace(path.join(dir, 'nope'), cap));
    expect(error.code).toBe('WORKSPACE_INVALID');
    expect(error.message).toContain('does not exist');
  });

  it('refuses a file and names its folder', async () => {
    const dir = await temporaryDir();
    await writeFile(path.join(dir, 'sales.csv'), 'a\n1\n');
    const error = await rejection(checkWorkspace(path.join(dir, 'sales.csv'), cap));
    expect(error.message).toContain('is a file, not a folder');
    expect(error.fix).toContain(dir);
  });

  it('refuses an empty folder, and one with no data file', async () => {
    const dir = await temporaryDir();
    await mkdir(path.join(dir, 'empty', 'deeper'), { recursive: true });
    expect((await rejection(checkWorkspace(path.join(dir, 'empty'), cap))).message).toContain('is empty');
    await writeFile(path.join(dir, 'empty', 'deeper', 'photo.jpg'), 'jpg');
    const error = await rejection(checkWorkspace(path.join(dir, 'empty'), cap));
    expect(error.message).toContain('no data file');
    expect(error.message).toContain('deeper/photo.jpg (unsupported type (.jpg))');
    expect(error.fix).toContain('CSV');
  });

  it('refuses a workspace above the cap and shows the sizes', async () => {
    const dir = await temporaryDir();
    await writeFile(path.join(dir, 'big.csv'), Buffer.alloc(3 * 1024 * 1024, 'x'));
    await writeFile(path.join(dir, 'small.csv'), 'a\n1\n');
    const error = await rejection(checkWorkspace(dir, { maxTotalBytes: 2 * 1024 * 1024 }));
    expect(error.message).toContain('holds 3.0 MB in 2 files, above the cap of 2.0 MB');
    expect(error.message).toContain('big.csv 3.0 MB');
    expect(error.fix).toContain('--max-workspace-mb 4');
  });

  it('marks special files (a FIFO) as skipped instead of blocking on them', async () => {
    const dir = await temporaryDir();
    await writeFile(path.join(dir, 'sales.csv'), 'a\n1\n');
    execFileSync('mkfifo', [path.join(dir, 'pipe.csv')]);
    const check = await checkWorkspace(dir, cap);
    expect(check.skipped).toEqual([
      { path: 'pipe.csv', sizeBytes: 0, kind: 'special', reason: 'not a regular file' },
    ]);
  });

  it('lists an unreadable file as skipped and keeps the readable ones', async () => {
    const dir = await temporaryDir();
    await chmod(dir, 0o755);
    await writeFile(path.join(dir, 'sales.csv'), 'a\n1\n');
    await writeFile(path.join(dir, 'secret.csv'), 'a\n2\n');
    await chmod(path.join(dir, 'secret.csv'), 0o000);
    // root reads any file: check as an unprivileged user then, in a child process.
    const skipped = process.getuid?.() === 0 ? checkAsNobody(dir) : (await checkWorkspace(dir, cap)).skipped;
    expect(skipped).toEqual([
      { path: 'secret.csv', sizeBytes: 4, kind: 'unreadable', reason: 'unreadable (EACCES)' },
    ]);
  });
});

function checkAsNobody(dir: string): unknown {
  const script = `import(${JSON.stringify(path.resolve('src/cli/workspace-check.ts'))})
    .then((m) => m.checkWorkspace(process.argv[1], { maxTotalBytes: 1e9 }))
    .then((check) => process.stdout.write(JSON.stringify(check.skipped)))`;
  const output = execFileSync(process.execPath, ['--import', 'tsx', '-e', script, dir], {
    uid: 65534,
    gid: 65534,
  });
  return JSON.parse(output.toString()) as unknown;
}
