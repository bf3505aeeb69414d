import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildRecordedDeepRun } from '../deep/support/recorded-deep-run.ts';
import { removeTemporaryDirs, runDatalyst, temporaryDir } from './support/cli-harness.ts';

afterAll(removeTemporaryDirs);

describe('datalyst report on a deep analysis folder', () => {
  it('writes the deep report (html and md) and says the other formats are not written', async () => {
    const runDir = path.join(await temporaryDir(), 'deep');
    const record = await buildRecordedDeepRun(runDir);
    const run = await runDatalyst(['report', runDir, '--format', 'html,md,ipynb']);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain('not written: ipynb');
    expect(run.stdout).toContain('report.html');
    const html = await readFile(path.join(runDir, 'report.html'), 'utf8');
    expect(html).toContain('<title>Datalyst deep analysis: Generate a data science report.</title>');
    for (const section of record.sections) expect(html).toContain(`id="section-${section.id}"`);
    expect(await readFile(path.join(runDir, 'report.md'), 'utf8')).toContain('## Evidence');
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
