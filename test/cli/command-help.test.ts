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
  // `chart --help` listed analyze's codes ("0 answered", "3 ran but did not answer (max rounds…)",
  // "5 model unavailable"), as notebook and chat did; serve listed none.
  it.each([
    { command: 'analyze', codes: [0, 1, 2, 3, 4, 5, 130] },
    { command: 'chart', codes: [0, 1, 2, 4, 130] },
    { command: 'report', codes: [0, 1, 2, 4] },
    { command: 'notebook', codes: [0, 1, 2, 3, 4, 130] },
    { command: 'doctor', codes: [0, 1, 2, 4, 5] },
    { command: 'setup', codes: [0, 1, 2, 4, 130] },
    { command: 'serve', codes: [0, 1, 2, 4, 130] },
    { command: 'rerun', codes: [0, 1, 2, 3, 4, 5, 130] },
    { command: 'chat', codes: [0, 1, 2, 4] },
  ])("$command lists $codes and no other command's", async ({ command, codes }) => {
    const run = await runDatalyst([command, '--help']);
    expect(run.exitCode).toBe(0);
    expect(await exitCodesInHelp([command, '--help'])).toEqual(codes);
    expect(run.stdout.match(/Exit codes:/g)).toHaveLength(1);
    if (command !== 'analyze') {
      expect(run.stdout).not.toContain('answered (the run ended with an answer');
      expect(run.stdout).not.toContain('ran but did not answer');
    }
    if (!codes.includes(5)) expect(run.stdout).not.toContain('model unavailable');
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
