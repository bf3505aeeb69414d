import { chmod, chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readApiKeyFile } from '../../src/server/api-key-file.ts';

/**
 * The key file's mode was checked, not its owner: a 0600 file another user
 * owns is that user's to change, so they chose the server's key (ssh refuses
 * such a key too). Making a file of another owner needs root: the suite runs
 * as root here and in CI; elsewhere the test is left out, but never in CI.
 */
const canChown = process.getuid?.() === 0;
if (process.env['CI'] === 'true' && !canChown)
  throw new Error('CI runs the suite as root: this test needs it to chown a file.');
let dir = '';
afterEach(async () => {
  if (dir !== '') await rm(dir, { recursive: true, force: true });
});

describe('an API key file owned by another user', () => {
  it.runIf(canChown)('is refused, even with mode 0600', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'datalyst-key-owner-'));
    const file = path.join(dir, 'server.key');
    await writeFile(file, 'a-long-random-secret-0123456789abcdef\n');
    await chmod(file, 0o600);
    await chown(file, 4321, 4321);
    const refused = await readApiKeyFile(file).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'API_KEY_FILE_UNSAFE', fault: 'user' });
    expect((refused as Error).message).toContain('4321');
  });
});
