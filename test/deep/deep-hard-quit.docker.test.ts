import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { readDeepRecord } from '../../src/deep/index.ts';
import { removeTemporaryDirs, temporaryDir } from '../cli/support/cli-harness.ts';

/**
 * What broke: a second Ctrl-C ("Quit without waiting.") during an offline deep run exited 130 leaving
 * deep.json with no evidence although two sub-analyses had printed "10 evidence items", an empty
 * deep.json.<pid>.tmp, no report and no hint; `datalyst report` on the folder then said the run was
 * "still going (or its process died)". The real CLI, real sandboxes, two real SIGINTs.
 */

const projectRoot = path.resolve(import.meta.dirname, '../..');
const bin = path.join(projectRoot, 'bin', 'datalyst.js');
const cleanEnv = { NO_COLOR: '1', OPENAI_API_KEY: '', DATALYST_API_KEY: '', DATALYST_CONFIG: '' };

afterAll(removeTemporaryDirs);

describe('a deep run quit at once with a second Ctrl-C', () => {
  it('keeps the evidence gathered so far in deep.json, leaves no temporary file, and says how to get the report', async () => {
    const out = path.join(await temporaryDir('datalyst-deep-quit-'), 'deep');
    const child = execa(
      process.execPath,
      [
        bin,
        'analyze',
        path.join(projectRoot, 'workspace-examples', 'sales'),
        'Which regions drive revenue?',
        '--deep',
        '--offline',
        '--concurrency',
        '2',
        '--out',
        out,
      ],
      { cwd: projectRoot, env: cleanEnv, reject: false, all: true },
    );
    // As soon as the first sub-analysis's evidence is banked: Ctrl-C, then Ctrl-C again at once.
    let signalled = false;
    child.stdout?.on('data', (chunk: Buffer) => {
      if (signalled || !/S\d: \d+ evidence items?/.test(chunk.toString())) return;
      signalled = true;
      child.kill('SIGINT');
      setTimeout(() => child.kill('SIGINT'), 30);
    });
    const run = await child;
    expect(signalled, run.all).toBe(true);
    expect(run.exitCode, run.all).toBe(130);
    expect(run.stderr).toContain('Quit without waiting.');
    expect(run.stderr).toContain(`\`datalyst report ${out}\``);

    const record = await readDeepRecord(out);
    expect(record?.evidence.length ?? 0, run.all).toBeGreaterThan(0);
    expect(record?.endedAt, run.all).toBeNull();
    const banked = record?.subAnalyses.filter((sub) => sub.evidenceIds.length > 0) ?? [];
    expect(banked.length).toBeGreaterThan(0);
    expect((await readdir(out)).filter((name) => name.endsWith('.tmp'))).toEqual([]);

    // The report of the folder says the run was stopped, not that it may still be going, and shows the evidence.
    const report = await execa(process.execPath, [bin, 'report', out, '--format', 'html,md'], {
      cwd: projectRoot,
      env: cleanEnv,
      reject: false,
      all: true,
    });
    expect(report.exitCode, report.all).toBe(0);
    expect(report.all).toContain('the run was stopped before it ended');
    const html = await readFile(path.join(out, 'report.html'), 'utf8');
    expect(html).toContain('The run was stopped before it ended');
    expect(html).not.toContain('still going');
    expect(html).toContain(`id="evidence-EV1"`);
    const markdown = await readFile(path.join(out, 'report.md'), 'utf8');
    expect(markdown).toMatch(/^# Cancelled: /);
  });
});
