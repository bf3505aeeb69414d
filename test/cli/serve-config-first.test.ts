import { spawn } from 'node:child_process';
import { chmod, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * `datalyst serve --host 0.0.0.0` without an API key printed "Docker engine
 * answers…" (and checked the runner image) before it refused for want of a
 * key: a configuration error must be said before anything starts.
 */

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function serve(
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ exitCode: number | null; stdout: string; stderr: string; dir: string }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-serve-config-'));
  dirs.push(dir);
  const { DATALYST_SERVER_API_KEY: _key, ...inherited } = process.env;
  const child = spawn(
    process.execPath,
    [
      path.resolve('bin/datalyst.js'),
      'serve',
      '--offline',
      // The Docker backend (the default): its checks are what must not come first.
      '--sandbox',
      'docker',
      '--warm',
      '0',
      '--port',
      '0',
      '--data-dir',
      path.join(dir, 'data'),
      ...args,
    ],
    { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...inherited, NO_COLOR: '1', ...env } },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exitCode = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { exitCode, stdout, stderr, dir };
}

describe('`datalyst serve` with a bad key setting refuses before Docker is checked', () => {
  it('--host 0.0.0.0 without an API key: exit 2, the key is named first, no Docker line, no data folder', async () => {
    const run = await serve(['--host', '0.0.0.0']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('Listening on 0.0.0.0 needs an API key');
    expect(run.stderr).not.toContain('Docker');
    expect(run.stdout).toBe('');
    expect(await readdir(run.dir)).toEqual([]);
  });

  it('an API key file others may read: refused before Docker is checked', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-serve-key-'));
    dirs.push(dir);
    const keyFile = path.join(dir, 'key');
    await writeFile(keyFile, 'a-long-random-secret-0123456789abcdef\n');
    await chmod(keyFile, 0o644);
    const run = await serve(['--host', '0.0.0.0', '--api-key-file', keyFile]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain(keyFile);
    expect(run.stderr).not.toContain('Docker');
    expect(run.stdout).toBe('');
  });

  it('a key shorter than 16 characters: refused before Docker is checked', async () => {
    const run = await serve(['--host', '0.0.0.0'], { DATALYST_SERVER_API_KEY: 'short' });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('shorter than 16 characters');
    expect(run.stderr).not.toContain('Docker');
  });

  it('a --public-url that is not an http(s) base: refused before Docker is checked', async () => {
    const run = await serve(['--public-url', 'ftp://data.example.com']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('--public-url must be http or https, not ftp.');
    expect(run.stderr).not.toContain('Docker');
    expect(run.stdout).toBe('');
  });

  it('a --public-url off this machine without an API key: refused before Docker is checked', async () => {
    const run = await serve(['--public-url', 'https://data.example.com']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('needs an API key');
    expect(run.stderr).not.toContain('Docker');
    expect(run.stdout).toBe('');
  });
});
