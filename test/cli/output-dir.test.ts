import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { prepareOutDir } from '../../src/cli/output-dir.ts';
import { removeTemporaryDirs, temporaryDir } from './support/cli-harness.ts';

afterEach(removeTemporaryDirs);

describe('output folder', () => {
  it('creates a new folder, and takes an existing empty one', async () => {
    const dir = await temporaryDir();
    expect(await prepareOutDir(path.join(dir, 'a', 'b'), false)).toBe(path.join(dir, 'a', 'b'));
    await mkdir(path.join(dir, 'empty'));
    expect(await prepareOutDir(path.join(dir, 'empty'), false)).toBe(path.join(dir, 'empty'));
  });

  it('never writes into an explicit folder that holds files (a previous report)', async () => {
    const dir = await temporaryDir();
    await writeFile(path.join(dir, 'report.html'), '<p>previous</p>');
    await expect(prepareOutDir(dir, false)).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringContaining('already holds files'),
    });
    expect(await readdir(dir)).toEqual(['report.html']);
    await expect(prepareOutDir(path.join(dir, 'report.html'), false)).rejects.toMatchObject({
      message: expect.stringContaining('is a file'),
    });
  });

  it('gives a default folder a suffix when two runs start in the same second', async () => {
    const dir = await temporaryDir();
    const first = path.join(dir, '20250314-093015-sales');
    await mkdir(first);
    await writeFile(path.join(first, 'trace.jsonl'), '');
    expect(await prepareOutDir(first, true)).toBe(`${first}-2`);
    await writeFile(path.join(`${first}-2`, 'trace.jsonl'), '');
    expect(await prepareOutDir(first, true)).toBe(`${first}-3`);
  });
});
