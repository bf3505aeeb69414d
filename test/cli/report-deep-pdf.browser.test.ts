import { readFile, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildRecordedDeepRun } from '../deep/support/recorded-deep-run.ts';
import { removeTemporaryDirs, runDatalyst, temporaryDir } from './support/cli-harness.ts';

// `datalyst report` on a deep run folder, printed by Debian's Chromium (/usr/bin/chromium, the default).
afterAll(removeTemporaryDirs);

describe('datalyst report <deep run> --format pdf', () => {
  // It used to refuse: "A deep analysis has no pdf report".
  it('writes report.pdf and rewrites nothing else', async () => {
    const parent = await temporaryDir();
    const runDir = path.join(parent, 'deep');
    await buildRecordedDeepRun(runDir);
    expect((await runDatalyst(['report', runDir])).exitCode).toBe(0);
    const before = await folderTimes(runDir);

    const run = await runDatalyst(['report', 'deep', '--format', 'pdf'], { cwd: parent });
    expect(run.stderr).toBe('');
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain('report.pdf');
    const pdfPath = path.join(runDir, 'report.pdf');
    expect((await readFile(pdfPath)).subarray(0, 5).toString()).toBe('%PDF-');
    expect((await stat(pdfPath)).size).toBeGreaterThan(10_000);
    const after = await folderTimes(runDir);
    const { ['report.pdf']: printed, ...others } = after;
    expect(printed).toBeDefined();
    expect(others).toEqual(before);
  });
});

/** Each file's modification time under a folder, to see what was written. */
async function folderTimes(dir: string): Promise<Record<string, number>> {
  const times: Record<string, number> = {};
  for (const entry of await readdir(dir, { recursive: true }))
    times[entry] = (await stat(path.join(dir, entry))).mtimeMs;
  return times;
}
