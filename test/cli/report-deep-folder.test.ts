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

  it('warns only about a format asked for that a deep report does not have (pdf)', async () => {
    const runDir = path.join(await temporaryDir(), 'deep');
    await buildRecordedDeepRun(runDir);
    const run = await runDatalyst(['report', runDir, '--format', 'ipynb,pdf']);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain('A deep analysis has no pdf report');
    expect(run.stdout).toContain(`\`datalyst report ${path.join(runDir, 'sub', 'S1')} --format pdf\``);
    expect(run.stdout).toContain('analysis.ipynb');
    await expect(stat(path.join(runDir, 'report.html'))).rejects.toThrow();
    await expect(stat(path.join(runDir, 'report.pdf'))).rejects.toThrow();
  });

  // `report <deep run> --format pdf` wrote no PDF, rewrote report.html, report.md and analysis.ipynb, exited 0
  // and listed deep.json, which it had not written; its hint `datalyst report sub/S1` was relative to the run folder.
  it('refuses --format pdf alone (exit 2, a fix that works from here) and rewrites nothing', async () => {
    const parent = await temporaryDir();
    const runDir = path.join(parent, 'deep');
    await buildRecordedDeepRun(runDir);
    expect((await runDatalyst(['report', runDir])).exitCode).toBe(0);
    const before = await folderTimes(runDir);
    const run = await runDatalyst(['report', 'deep', '--format', 'pdf'], { cwd: parent });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('CONFIG_INVALID');
    expect(run.stderr).toContain('A deep analysis has no pdf report');
    expect(run.stderr).toContain('`datalyst report deep/sub/S1 --format pdf`');
    expect(run.stdout).toBe('');
    expect(await folderTimes(runDir)).toEqual(before);
    // The hint works from where it was given.
    const sub = await runDatalyst(['report', 'deep/sub/S1', '--format', 'md'], { cwd: parent });
    expect(sub.exitCode).toBe(0);
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

describe('analyze --deep and a format a deep report has not', () => {
  // `analyze --deep --format …,pdf` ran the whole analysis and only then said there would be no PDF.
  it('refuses --format pdf alone before anything runs', async () => {
    const out = path.join(await temporaryDir(), 'run');
    let sandboxes = 0;
    const run = await runDatalyst(
      ['analyze', 'workspace-examples/student-loan', '--deep', '--offline', '--format', 'pdf', '--out', out],
      { prepareSandbox: () => Promise.resolve(void sandboxes++) },
    );
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('A deep analysis has no pdf report');
    expect(sandboxes).toBe(0);
    await expect(stat(out)).rejects.toThrow();
  });

  it('says it before the run when other formats are asked for too', async () => {
    const out = path.join(await temporaryDir(), 'run');
    let warnedBeforeSandbox = false;
    let stdout = '';
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
        onStdout: (text) => (stdout += text),
        prepareSandbox: () => {
          warnedBeforeSandbox = stdout.includes('A deep analysis has no pdf report');
          return Promise.reject(new Error('stop here: the test runs no sandbox'));
        },
      },
    );
    expect(run.exitCode).not.toBe(0);
    expect(warnedBeforeSandbox).toBe(true);
  });
});

/** Each file's modification time under a folder, to see that nothing was written. */
async function folderTimes(dir: string): Promise<Record<string, number>> {
  const times: Record<string, number> = {};
  for (const entry of await readdir(dir, { recursive: true }))
    times[entry] = (await stat(path.join(dir, entry))).mtimeMs;
  return times;
}
