import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { renderReport } from '../../src/report/index.ts';
import { makeSyntheticTrace } from '../fixtures/traces/synthetic-trace.ts';
import { removeTemporaryDirs, runDatalyst, temporaryDir } from './support/cli-harness.ts';

/**
 * `datalyst notebook` and `datalyst report` given something that is not a run
 * folder: each says what it was given and a fix that works, before starting
 * any sandbox (none is given to these runs: one started would fail them).
 */
afterAll(removeTemporaryDirs);

describe('datalyst notebook --execute: targets that are not a run with code', () => {
  it('a missing folder, a file and a data folder are each named as such', async () => {
    const root = await temporaryDir();
    const dataFolder = join(root, 'data');
    await mkdir(dataFolder);
    await writeFile(join(dataFolder, 'orders.csv'), 'a,b\n1,2\n');
    const missing = await runDatalyst(['notebook', join(root, 'nope'), '--execute']);
    expect(missing.stderr).toContain(`There is no folder ${join(root, 'nope')}.`);
    expect(missing.stderr).toContain('fix: Give the run folder `datalyst analyze` wrote');
    expect(missing.stderr).not.toContain('datalyst report');
    const file = await runDatalyst(['notebook', join(dataFolder, 'orders.csv'), '--execute']);
    expect(file.stderr).toContain(`${join(dataFolder, 'orders.csv')} is a file, not a run folder.`);
    const data = await runDatalyst(['notebook', dataFolder, '--execute']);
    expect(data.stderr).toContain(
      `${dataFolder} is not a run folder: it has no analysis.ipynb, trace.jsonl, trace.json or deep.json.`,
    );
    for (const run of [missing, file, data]) expect(run.exitCode).toBe(2);
  });

  it('a run folder without its notebook is told to render it', async () => {
    const runDir = await temporaryDir();
    await writeFile(join(runDir, 'trace.json'), JSON.stringify(makeSyntheticTrace({ rounds: 1 })));
    const run = await runDatalyst(['notebook', runDir, '--execute']);
    expect(run.stderr).toContain(`There is no analysis.ipynb in ${runDir}.`);
    expect(run.stderr).toContain(`fix: Render it with \`datalyst report ${runDir} --format ipynb\`.`);
    expect(run.exitCode).toBe(2);
  });

  it('a run that ran no code: nothing to re-execute, said plainly, no "0 of 0"', async () => {
    const runDir = await temporaryDir();
    const trace = makeSyntheticTrace({ rounds: 0, charts: 0, figures: 0, outcome: 'cancelled' });
    await renderReport(trace, { outDir: runDir, formats: ['ipynb'] });
    const run = await runDatalyst(['notebook', runDir, '--execute']);
    expect(run.stdout).toContain(
      'has no cell the run executed (the run ran no code): nothing to re-execute or compare.',
    );
    expect(run.stdout).not.toContain('0 of 0');
    expect(run.exitCode).toBe(0);
  });
});

describe('datalyst report: a target that is not a run folder or a trace', () => {
  it('a data file is named as neither, not as a trace that is not valid JSON', async () => {
    const root = await temporaryDir();
    await writeFile(join(root, 'orders.csv'), 'a,b\n1,2\n');
    const run = await runDatalyst(['report', join(root, 'orders.csv')]);
    expect(run.stderr).toContain(
      `${join(root, 'orders.csv')} is neither a run folder nor a trace (trace.jsonl or trace.json).`,
    );
    expect(run.exitCode).toBe(2);
  });

  it('a broken trace.json is named by its path', async () => {
    const root = await temporaryDir();
    await writeFile(join(root, 'trace.json'), '{');
    const run = await runDatalyst(['report', join(root, 'trace.json')]);
    expect(run.stderr).toContain(`${join(root, 'trace.json')}: The trace is not valid JSON.`);
    expect(run.exitCode).toBe(2);
  });
});
