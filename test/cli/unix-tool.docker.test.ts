import { cp, readFile, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { removeTemporaryDirs, temporaryDir } from './support/cli-harness.ts';

/**
 * The real `datalyst` command in a shell pipeline, as scripts use it, with
 * the real Docker sandbox and the offline analyst.
 */

const projectRoot = path.resolve(import.meta.dirname, '../..');
const bin = path.join(projectRoot, 'bin', 'datalyst.js');
const cleanEnv = {
  NO_COLOR: '1',
  DATALYST_MODEL: '',
  OPENAI_API_KEY: '',
  OPENAI_BASE_URL: '',
  DATALYST_BASE_URL: '',
  DATALYST_API_KEY: '',
  DATALYST_CONFIG: '',
};

/** `datalyst <args> | head -<lines>` under `pipefail`: the pipeline's status is datalyst's when it fails. */
function pipeline(cwd: string, args: string, lines: number) {
  return execa('bash', ['-o', 'pipefail', '-c', `node ${JSON.stringify(bin)} ${args} | head -${lines}`], {
    cwd,
    env: cleanEnv,
    reject: false,
  });
}

const exists = (file: string) =>
  stat(file).then(
    () => true,
    () => false,
  );

afterAll(removeTemporaryDirs);

describe('datalyst in a pipe (the reader goes away: EPIPE)', () => {
  it('`analyze . | head -3` ends quietly, writes the report; a second `analyze . --json | head -2` leaves runs/ out', async () => {
    const project = await temporaryDir('datalyst-pipe-');
    await cp(path.join(projectRoot, 'workspace-examples', 'sales'), project, { recursive: true });

    const first = await pipeline(project, 'analyze . --offline', 3);
    expect(first.exitCode, first.stderr).toBe(0);
    expect(first.stdout.split('\n')).toHaveLength(3);
    expect(first.stderr).not.toMatch(/EPIPE|Error|✗/);
    const runs = await readdir(path.join(project, 'runs'));
    expect(runs).toHaveLength(1);
    expect(await exists(path.join(project, 'runs', runs[0] ?? '', 'report.html'))).toBe(true);

    const second = await pipeline(project, 'analyze . --offline --json', 2);
    expect(second.exitCode, second.stderr).toBe(0);
    const lines = second.stdout.split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({ type: 'workspace-check', excluded: ['runs'] });
    expect(lines[1]).toMatchObject({ type: 'preflight', step: 'sandbox' });
    expect(second.stderr).not.toMatch(/EPIPE|✗/);
    const secondRun = (await readdir(path.join(project, 'runs'))).find((name) => !runs.includes(name)) ?? '';
    expect(await exists(path.join(project, 'runs', secondRun, 'report.html'))).toBe(true);
    // The sandbox got only the data: the first run's folder was neither copied in nor hashed.
    const runStart = JSON.parse(
      (await readFile(path.join(project, 'runs', secondRun, 'trace.jsonl'), 'utf8')).split('\n')[0] ?? '',
    ) as { workspace: { files: { path: string }[] } };
    expect(runStart.workspace.files.map((file) => file.path)).toEqual([
      'README.md',
      'instruction.txt',
      'orders.csv',
      'sales_plan.xlsx',
    ]);
  });
});

describe('limits the engine cannot give', () => {
  it('exit 2 before a container starts, naming the option and what the engine has; no run folder', async () => {
    const project = await temporaryDir('datalyst-limits-');
    await cp(path.join(projectRoot, 'workspace-examples', 'sales'), project, { recursive: true });
    const cpus = await execa(process.execPath, [bin, 'analyze', '.', '--offline', '--cpus', '4096'], {
      cwd: project,
      env: cleanEnv,
      reject: false,
    });
    expect(cpus.exitCode).toBe(2);
    expect(cpus.stderr).toMatch(/asks for 4096 CPUs; the Docker engine has \d+/);
    expect(cpus.stderr).toMatch(/--cpus/);
    const memory = await execa(process.execPath, [bin, 'analyze', '.', '--offline', '--memory', '64m'], {
      cwd: project,
      env: cleanEnv,
      reject: false,
    });
    expect(memory.exitCode).toBe(2);
    expect(memory.stderr).toMatch(/below the 256 MB/);
    expect(memory.stderr).toMatch(/--memory/);
    expect(await exists(path.join(project, 'runs'))).toBe(false);
  });
});
