import { readFile, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { notebookSchema } from '../../src/report/index.ts';
import { buildRecordedDeepRun } from '../deep/support/recorded-deep-run.ts';
import { removeTemporaryDirs, runDatalyst, temporaryDir } from './support/cli-harness.ts';

afterAll(removeTemporaryDirs);

describe('datalyst report on a deep analysis folder', () => {
  it('writes every format a deep report has by default, with no warning', async () => {
    const runDir = path.join(await temporaryDir(), 'deep');
    const record = await buildRecordedDeepRun(runDir);
    const run = await runDatalyst(['report', runDir]);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).not.toMatch(/warn|not written|has no/i);
    expect(run.stdout).toContain('report.html');
    expect(run.stdout).toContain('analysis.ipynb');
    const html = await readFile(path.join(runDir, 'report.html'), 'utf8');
    expect(html).toContain('<title>Datalyst deep analysis: Generate a data science report.</title>');
    for (const section of record.sections) expect(html).toContain(`id="section-${section.id}"`);
    expect(await readFile(path.join(runDir, 'report.md'), 'utf8')).toContain('## Evidence');
    const notebook = notebookSchema.parse(
      JSON.parse(await readFile(path.join(runDir, 'analysis.ipynb'), 'utf8')) as unknown,
    );
    expect(notebook.cells.some((cell) => cell.id.startsWith('S1-E'))).toBe(true);
  });

  // Chromium is missing: `report <deep run> --format pdf` says how to get it (exit 4, CHROMIUM_UNAVAILABLE, as
  // for a single run's report) and, pdf being all that was asked for, rewrites nothing.
  it('--format pdf without Chromium: the fix, exit 4, and nothing rewritten', async () => {
    const runDir = path.join(await temporaryDir(), 'deep');
    await buildRecordedDeepRun(runDir);
    expect((await runDatalyst(['report', runDir])).exitCode).toBe(0);
    const before = await folderTimes(runDir);
    const run = await runDatalyst(['report', runDir, '--format', 'pdf'], {
      env: { DATALYST_CHROMIUM: path.join(runDir, 'no-such-chromium') },
    });
    expect(run.exitCode).toBe(4);
    expect(run.stderr).toContain('CHROMIUM_UNAVAILABLE');
    expect(run.stderr).toContain('apt-get install chromium');
    expect(await folderTimes(runDir)).toEqual(before);
  });

  it('--format ipynb,pdf without Chromium writes the notebook before it fails, and no report.html', async () => {
    const runDir = path.join(await temporaryDir(), 'deep');
    await buildRecordedDeepRun(runDir);
    const run = await runDatalyst(['report', runDir, '--format', 'ipynb,pdf'], {
      env: { DATALYST_CHROMIUM: path.join(runDir, 'no-such-chromium') },
    });
    expect(run.exitCode).toBe(4);
    expect(run.stderr).toContain('CHROMIUM_UNAVAILABLE');
    expect((await stat(path.join(runDir, 'analysis.ipynb'))).size).toBeGreaterThan(0);
    await expect(stat(path.join(runDir, 'report.html'))).rejects.toThrow();
    await expect(stat(path.join(runDir, 'report.pdf'))).rejects.toThrow();
  });

  it('lists exactly the files it wrote: deep.json only when copied to another folder', async () => {
    const parent = await temporaryDir();
    const runDir = path.join(parent, 'deep');
    await buildRecordedDeepRun(runDir);
    const here = await runDatalyst(['report', runDir]);
    expect(here.exitCode).toBe(0);
    expect(here.stdout).toContain('also: report.md, analysis.ipynb');
    expect(here.stdout).not.toContain('deep.json');
    const elsewhere = await runDatalyst(['report', runDir, '--out', path.join(parent, 'copy')]);
    expect(elsewhere.exitCode).toBe(0);
    expect(elsewhere.stdout).toContain('deep.json');
    expect(await readdir(path.join(parent, 'copy'))).toContain('deep.json');
  });

  it('renders a sub-analysis folder of it as an ordinary run', async () => {
    const runDir = path.join(await temporaryDir(), 'deep');
    await buildRecordedDeepRun(runDir);
    const run = await runDatalyst(['report', path.join(runDir, 'sub', 'S2'), '--format', 'html']);
    expect(run.exitCode).toBe(0);
    expect(await readFile(path.join(runDir, 'sub', 'S2', 'report.html'), 'utf8')).toContain(
      'What does enrolled.csv show',
    );
  });
});

describe('analyze --deep --format pdf', () => {
  // A deep run takes minutes: a PDF that cannot be printed is said before it starts, as for a single run.
  it('without Chromium: refused before anything runs, with the fix', async () => {
    const parent = await temporaryDir();
    const out = path.join(parent, 'run');
    let sandboxes = 0;
    const run = await runDatalyst(
      [
        'analyze',
        'workspace-examples/student-loan',
        '--deep',
        '--offline',
        '--format',
        'html,pdf',
        '--out',
        out,
      ],
      {
        env: { DATALYST_CHROMIUM: path.join(parent, 'no-such-chromium') },
        prepareSandbox: () => Promise.resolve(void sandboxes++),
      },
    );
    expect(run.exitCode).toBe(4);
    expect(run.stderr).toContain('CHROMIUM_UNAVAILABLE');
    expect(sandboxes).toBe(0);
    await expect(stat(out)).rejects.toThrow();
  });
});

/** Each file's modification time under a folder, to see that nothing was written. */
async function folderTimes(dir: string): Promise<Record<string, number>> {
  const times: Record<string, number> = {};
  for (const entry of await readdir(dir, { recursive: true }))
    times[entry] = (await stat(path.join(dir, entry))).mtimeMs;
  return times;
}
