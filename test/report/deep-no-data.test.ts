import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderDeepRunFolder } from '../../src/report/index.ts';
import { buildRecordedDeepRun } from '../deep/support/recorded-deep-run.ts';

/**
 * What broke: an offline deep run whose every file was damaged said "Put the data files in the
 * workspace folder…" although they were there, and that rules "wrote the brief, ran the
 * sub-analyses…" when none was written or run.
 */

let root = '';
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'datalyst-deep-no-data-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('the report of a deep run whose every file could not be read', () => {
  it('says to repair the files it names, and that the rules stopped before any brief', async () => {
    const outDir = join(root, 'all-bad');
    await buildRecordedDeepRun(outDir, (plain) => ({
      ...plain,
      unreadableFiles: [
        { path: 'broken.xlsx', error: 'Not an Excel workbook' },
        { path: 'empty.csv', error: 'EmptyFile: the file is empty (0 bytes)' },
      ],
      brief: null,
      subAnalyses: [],
      evidence: [],
      outline: null,
      sections: [],
      termination: {
        reason: 'no-data',
        detail: 'No file of the workspace could be read, so nothing was analysed.',
      },
    }));
    await renderDeepRunFolder(outDir, { formats: ['html', 'md'], now: new Date(0) });
    const html = await readFile(join(outDir, 'report.html'), 'utf8');
    const markdown = await readFile(join(outDir, 'report.md'), 'utf8');
    for (const text of [html, markdown.replace(/\\/g, '')]) {
      expect(text).toContain('The 2 data files are in the workspace but could not be read');
      expect(text).not.toContain('Put the data files');
      expect(text).toContain('it ended before its rules wrote a brief, so nothing was researched.');
      expect(text).not.toContain('wrote the brief');
    }
  });

  it('says which steps the rules took in an ordinary offline run', async () => {
    const outDir = join(root, 'plain');
    await buildRecordedDeepRun(outDir);
    await renderDeepRunFolder(outDir, { formats: ['html'], now: new Date(0) });
    expect(await readFile(join(outDir, 'report.html'), 'utf8')).toContain(
      'deterministic rules wrote the brief, ran the sub-analyses, kept their printed findings as evidence and wrote each section from its evidence only.',
    );
  });
});
