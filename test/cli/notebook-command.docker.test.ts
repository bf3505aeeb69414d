import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { notebookSchema, renderReport } from '../../src/report/index.ts';
import { createSandbox } from '../../src/sandbox/index.ts';
import { readTrace } from '../../src/trace/reader.ts';
import { ExitCode } from '../../src/cli/exit-codes.ts';
import { differenceBeyondTiedModes } from '../support/tied-modes.ts';
import { cellText } from '../support/notebook-runner.ts';
import { runDatalyst } from './support/cli-harness.ts';

/**
 * `datalyst notebook <run> --execute`: DeepAnalyze's recorded student-loan
 * run, its notebook re-executed with nbclient in a real sandbox of the
 * runner image, against its workspace and against a changed copy of it.
 */
const repoRoot = resolve(import.meta.dirname, '../..');
const fixture = join(repoRoot, 'test/fixtures/traces/student-loan/trace.jsonl');
let root = '';
let runDir = '';

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'datalyst-notebook-command-'));
  runDir = join(root, 'run');
  await renderReport(await readTrace(fixture), { outDir: runDir, formats: ['ipynb'] });
  await cp(fixture, join(runDir, 'trace.jsonl'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const notebookCommand = (workspace: string) =>
  runDatalyst(['notebook', runDir, '--execute', '--workspace', workspace], {
    createSandbox: (options) => createSandbox(options),
  });

describe('datalyst notebook --execute', () => {
  it('re-executes the notebook in the runner image and finds every output as recorded (a tied mode aside)', async () => {
    const workspace = join(repoRoot, 'workspace-examples/student-loan');
    const recorded = await readFile(join(runDir, 'analysis.ipynb'), 'utf8');
    const run = await notebookCommand(workspace);
    expect(run.stderr).toBe('');
    // The recorded notebook is left as it was; the executed one is beside it.
    expect(await readFile(join(runDir, 'analysis.ipynb'), 'utf8')).toBe(recorded);
    const executed = notebookSchema.parse(
      JSON.parse(await readFile(join(runDir, 'analysis.executed.ipynb'), 'utf8')),
    );
    expect(executed.cells.map((cell) => cell.id)).toContain('E7');
    if (run.exitCode === 0) {
      expect(run.stdout).toContain('7 of 7 executed cells gave the recorded outputs.');
      return;
    }
    // E1's describe() prints as `top` one of enrolled.csv's tied names, which one following the CPU's
    // vector sort (tied-modes.ts): on another machine than the recording's, the command rightly says E1
    // differs, and that must be the only difference.
    expect(run.stdout).toContain('6 of 7 executed cells gave the recorded outputs; 1 differ.');
    expect(run.stdout).toContain('≠ E1: stdout differs');
    expect(run.exitCode).toBe(ExitCode.notAnswered);
    const before = notebookSchema.parse(JSON.parse(recorded));
    expect(
      differenceBeyondTiedModes(
        cellText(executed, 'E1', 'stdout'),
        cellText(before, 'E1', 'stdout'),
        workspace,
      ),
    ).toBeNull();
  });

  it("re-executes a deep analysis's notebook against the workspace its sub-analyses recorded", async () => {
    const deepDir = join(root, 'deep');
    const analyzed = await runDatalyst(
      ['analyze', join(repoRoot, 'workspace-examples/student-loan'), '--deep', '--offline', '--out', deepDir],
      { createSandbox: (options) => createSandbox(options) },
    );
    expect(analyzed.exitCode).toBe(0);
    const run = await runDatalyst(['notebook', deepDir, '--execute'], {
      createSandbox: (options) => createSandbox(options),
    });
    expect(run.stderr).toBe('');
    expect(run.stdout).toMatch(/(\d+) of \1 executed cells gave the recorded outputs\.\n$/);
    expect(run.exitCode).toBe(0);
    const executed = notebookSchema.parse(
      JSON.parse(await readFile(join(deepDir, 'analysis.executed.ipynb'), 'utf8')),
    );
    expect(executed.cells.filter((cell) => cell.cell_type === 'code').length).toBeGreaterThan(10);
  });

  it('names the changed input file and the cells whose outputs differ', async () => {
    const workspace = join(root, 'changed-workspace');
    await cp(join(repoRoot, 'workspace-examples/student-loan'), workspace, { recursive: true });
    const enrolled = (await readFile(join(workspace, 'enrolled.csv'), 'utf8')).trimEnd().split('\n');
    await writeFile(join(workspace, 'enrolled.csv'), `${enrolled.slice(0, -10).join('\n')}\n`);
    const run = await notebookCommand(workspace);
    expect(run.stderr).toContain('enrolled.csv changed since the run (its SHA-256 differs).');
    expect(run.stdout).toMatch(
      /≠ E1: stdout differs\n {4}recorded: Number of rows: 1194\n {4}re-run: {3}Number of rows: 1184/,
    );
    expect(run.stdout).toMatch(/\d of 7 executed cells gave the recorded outputs; \d differ\./);
    expect(run.exitCode).toBe(3);
  });
});
