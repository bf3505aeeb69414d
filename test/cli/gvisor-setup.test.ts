import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mergeRunscIntoDaemonConfig } from '../../src/cli/gvisor-setup.ts';
import { ConfigError } from '../../src/errors/index.ts';

let dir: string;
let configPath: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'datalyst-daemon-json-'));
  configPath = path.join(dir, 'daemon.json');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function readConfig(): Promise<unknown> {
  return JSON.parse(await readFile(configPath, 'utf8'));
}

describe('registering runsc in daemon.json', () => {
  it('creates the file when there is none', async () => {
    expect(await mergeRunscIntoDaemonConfig(configPath, '/usr/bin/runsc')).toBe(true);
    expect(await readConfig()).toEqual({
      runtimes: { runsc: { path: '/usr/bin/runsc', runtimeArgs: ['--network=none'] } },
    });
    expect((await stat(configPath)).mode & 0o777).toBe(0o644);
  });

  it('keeps every other key, runtime and argument, and the file mode; a second run changes nothing', async () => {
    const before = {
      'log-driver': 'journald',
      'default-runtime': 'runc',
      runtimes: {
        kata: { path: '/usr/bin/kata-runtime' },
        runsc: { path: '/opt/runsc', runtimeArgs: ['--platform=kvm'] },
      },
    };
    await writeFile(configPath, JSON.stringify(before));
    await chmod(configPath, 0o600);
    expect(await mergeRunscIntoDaemonConfig(configPath, '/usr/bin/runsc')).toBe(true);
    expect(await readConfig()).toEqual({
      ...before,
      runtimes: {
        kata: { path: '/usr/bin/kata-runtime' },
        runsc: { path: '/opt/runsc', runtimeArgs: ['--platform=kvm', '--network=none'] },
      },
    });
    expect((await stat(configPath)).mode & 0o777).toBe(0o600);
    const written = await readFile(configPath, 'utf8');
    expect(await mergeRunscIntoDaemonConfig(configPath, '/usr/bin/runsc')).toBe(false);
    expect(await readFile(configPath, 'utf8')).toBe(written);
  });

  it('never rewrites a file it cannot read as Docker does', async () => {
    for (const text of ['{ "log-driver": ', '[1, 2]', '{"runtimes": {"runsc": 3}}']) {
      await writeFile(configPath, text);
      await expect(mergeRunscIntoDaemonConfig(configPath, '/usr/bin/runsc')).rejects.toBeInstanceOf(
        ConfigError,
      );
      expect(await readFile(configPath, 'utf8')).toBe(text);
    }
  });
});
