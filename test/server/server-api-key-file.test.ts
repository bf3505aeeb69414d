import { EventEmitter } from 'node:events';
import { chmod, mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readApiKeyFile } from '../../src/server/api-key-file.ts';
import { removeTemporaryDirs, runDatalyst, temporaryDir } from '../cli/support/cli-harness.ts';

/** `--api-key-file` is refused, as ssh refuses a private key, when its group or others may read or write it. */

afterEach(removeTemporaryDirs);

const key = 'a-long-random-secret-0123456789abcdef';

async function keyFile(mode: number, text = `${key}\n`): Promise<string> {
  const file = path.join(await temporaryDir('datalyst-key-'), 'server.key');
  await writeFile(file, text);
  await chmod(file, mode);
  return file;
}

describe('the API key file', () => {
  it('is read when only its owner may read it (0600, 0400)', async () => {
    expect(await readApiKeyFile(await keyFile(0o600))).toBe(key);
    expect(await readApiKeyFile(await keyFile(0o400))).toBe(key);
  });

  it.each([0o644, 0o640, 0o604, 0o620, 0o666])(
    'is refused with mode %o, naming the mode and the fix',
    async (mode) => {
      const file = await keyFile(mode);
      const refused = await readApiKeyFile(file).catch((error: unknown) => error);
      expect(refused).toMatchObject({
        code: 'API_KEY_FILE_UNSAFE',
        fault: 'user',
        fix: `Make it private to its owner: \`chmod 600 ${file}\`.`,
      });
      expect((refused as Error).message).toContain(`permissions 0${mode.toString(8)}`);
      expect((refused as Error).message).not.toContain(key);
    },
  );

  it('is refused when empty, a folder, or missing; a link to a private file is followed', async () => {
    await expect(readApiKeyFile(await keyFile(0o600, '\n'))).rejects.toMatchObject({
      code: 'API_KEY_FILE_INVALID',
    });
    const dir = await temporaryDir('datalyst-key-dir-');
    await mkdir(path.join(dir, 'folder'), { mode: 0o700 });
    await expect(readApiKeyFile(path.join(dir, 'folder'))).rejects.toMatchObject({
      code: 'API_KEY_FILE_INVALID',
    });
    await expect(readApiKeyFile(path.join(dir, 'missing'))).rejects.toMatchObject({
      code: 'API_KEY_FILE_INVALID',
      cause: expect.objectContaining({ code: 'ENOENT' }),
    });
    const link = path.join(dir, 'link.key');
    await symlink(await keyFile(0o600), link);
    expect(await readApiKeyFile(link)).toBe(key);
    const openLink = path.join(dir, 'open-link.key');
    await symlink(await keyFile(0o644), openLink);
    await expect(readApiKeyFile(openLink)).rejects.toMatchObject({ code: 'API_KEY_FILE_UNSAFE' });
  });

  it('`datalyst serve --api-key-file` with a group-readable file does not start: exit 2, the code and the fix on stderr', async () => {
    const file = await keyFile(0o640);
    const dataDir = await temporaryDir('datalyst-serve-data-');
    const run = await runDatalyst(
      [
        'serve',
        '--host',
        '0.0.0.0',
        '--port',
        '0',
        '--data-dir',
        dataDir,
        '--api-key-file',
        file,
        '--offline',
      ],
      { cwd: dataDir },
    );
    expect(run.exitCode).toBe(2);
    expect(run.stdout).not.toContain('serving on');
    expect(run.stderr).toContain('API_KEY_FILE_UNSAFE');
    expect(run.stderr).toContain(`chmod 600 ${file}`);
    expect(run.stderr).not.toContain(key);
  });

  it('`datalyst serve --api-key-file` with a 0600 file starts, and then requires that key', async () => {
    const file = await keyFile(0o600);
    const dataDir = await temporaryDir('datalyst-serve-data-');
    const signals = new EventEmitter();
    let resolveUrl: (url: string) => void = () => undefined;
    const listening = new Promise<string>((resolve) => (resolveUrl = resolve));
    const running = runDatalyst(
      [
        'serve',
        '--port',
        '0',
        '--data-dir',
        dataDir,
        '--api-key-file',
        file,
        '--offline',
        '--sandbox',
        'local',
      ],
      {
        cwd: dataDir,
        signals,
        onStdout: (text) => {
          const match = /serving on (http:\/\/\S+)/.exec(text);
          if (match?.[1] !== undefined) resolveUrl(match[1]);
        },
      },
    );
    const url = await Promise.race([
      listening,
      running.then((run) => {
        throw new Error(`serve ended: ${run.stderr}`);
      }),
    ]);
    expect((await fetch(`${url}/v1/models`)).status).toBe(401);
    expect((await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(
      200,
    );
    signals.emit('SIGINT', 'SIGINT');
    expect((await running).exitCode).toBe(0);
  });
});
