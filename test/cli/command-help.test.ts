import { describe, expect, it } from 'vitest';
import { runDatalyst } from './support/cli-harness.ts';

/** The exit codes a command's --help lists, in order. */
async function exitCodesInHelp(argv: string[]): Promise<number[]> {
  const run = await runDatalyst(argv);
  expect(run.exitCode).toBe(0);
  const table = run.stdout.split('Exit codes:\n')[1] ?? '';
  return [...table.matchAll(/^ {2}(\d+) +\S/gm)].map((match) => Number(match[1]));
}

describe("each command's --help shows the exit codes it can end with", () => {
  it('analyze: all of them', async () => {
    expect(await exitCodesInHelp(['analyze', '--help'])).toEqual([0, 1, 2, 3, 4, 5, 130]);
  });

  it('doctor: what a failed check gives, no answers or rounds', async () => {
    expect(await exitCodesInHelp(['doctor', '--help'])).toEqual([0, 1, 2, 4, 5]);
  });

  it('report: written, a bug, or a bad trace or folder', async () => {
    expect(await exitCodesInHelp(['report', '--help'])).toEqual([0, 1, 2]);
  });

  it('setup: built, a bug, a bad option, no engine, cancelled', async () => {
    expect(await exitCodesInHelp(['setup', '--help'])).toEqual([0, 1, 2, 4, 130]);
  });
});

describe('closed sets of values are commander choices', () => {
  it('names the allowed values of --profile and --sandbox, exit 2', async () => {
    const profile = await runDatalyst(['analyze', 'data', '--profile', 'llama']);
    expect(profile.exitCode).toBe(2);
    expect(profile.stderr).toContain('Allowed choices are deepanalyze, chat.');
    const sandbox = await runDatalyst(['analyze', 'data', '--sandbox', 'vm']);
    expect(sandbox.exitCode).toBe(2);
    expect(sandbox.stderr).toContain('Allowed choices are docker, local.');
  });
});
