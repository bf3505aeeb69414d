import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeepRecord } from '../../src/deep/index.ts';
import { deepRunState } from '../../src/report/deep-run.ts';
import { renderDeepRunFolder } from '../../src/report/index.ts';
import { buildRecordedDeepRun } from '../deep/support/recorded-deep-run.ts';

/**
 * A deep.json that never ended (its process quit at once, or was killed) reads "The run is still
 * going (or its process died)". The record names its process: the report tells a stopped run from one
 * still going when the process is on this machine.
 */

let root = '';
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'datalyst-deep-state-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** The pid of a process that has ended. */
function deadPid(): number {
  return Number(execFileSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']));
}

function unfinished(pid: number, host = hostname()) {
  return (plain: DeepRecord): DeepRecord => ({
    ...plain,
    endedAt: null,
    owner: { pid, host },
    termination: { reason: 'cancelled', detail: 'The run is still going (or its process died).' },
    // S4 was running, never ended.
    subAnalyses: plain.subAnalyses.map((sub) =>
      sub.id === 'S4' ? { ...sub, outcome: 'skipped', endedAt: null, detail: '' } : sub,
    ),
    outline: null,
    sections: [],
  });
}

describe('a deep.json that never ended', () => {
  it('is reported as stopped when its process is gone, the running sub-analysis as stopped while it ran', async () => {
    const outDir = join(root, 'stopped');
    const record = await buildRecordedDeepRun(outDir, unfinished(deadPid()));
    expect(deepRunState(record)).toBe('stopped');
    const rendered = await renderDeepRunFolder(outDir, { formats: ['html', 'md'], now: new Date(0) });
    expect(rendered.runState).toBe('stopped');
    const html = await readFile(join(outDir, 'report.html'), 'utf8');
    expect(html).toContain('The run was stopped before it ended');
    expect(html).not.toContain('still going');
    expect(html).toContain('The run was stopped while it ran.');
    // What it had banked is shown.
    expect(html).toContain('id="evidence-EV1"');
  });

  it('is still going while its process lives, and cannot be told for another machine', async () => {
    const outDir = join(root, 'running');
    const record = await buildRecordedDeepRun(outDir, unfinished(process.pid));
    expect(deepRunState(record)).toBe('running');
    await renderDeepRunFolder(outDir, { formats: ['html'], now: new Date(0) });
    expect(await readFile(join(outDir, 'report.html'), 'utf8')).toContain(
      `The run is still going (process ${process.pid})`,
    );
    const elsewhere = unfinished(deadPid(), `not-${hostname()}`)(record);
    expect(deepRunState(elsewhere)).toBe('unknown');
    expect(deepRunState({ ...elsewhere, endedAt: '2026-01-01T00:00:00.000Z' })).toBe('ended');
  });
});
