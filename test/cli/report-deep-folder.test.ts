import { readFile, stat } from 'node:fs/promises';
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
    expect(run.stdout).toContain('analysis.ipynb');
    await expect(stat(path.join(runDir, 'report.html'))).rejects.toThrow();
    await expect(stat(path.join(runDir, 'report.pdf'))).rejects.toThrow();
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
