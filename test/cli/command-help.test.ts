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
  it.each(['analyze', 'chat'])(
    '%s names the allowed values of --profile and --sandbox, exit 2',
    async (command) => {
      const profile = await runDatalyst([command, 'data', '--profile', 'llama']);
      expect(profile.exitCode).toBe(2);
      expect(profile.stderr).toContain('Allowed choices are deepanalyze, chat.');
      const sandbox = await runDatalyst([command, 'data', '--sandbox', 'vm']);
      expect(sandbox.exitCode).toBe(2);
      expect(sandbox.stderr).toContain('Allowed choices are docker, local.');
    },
  );
});

describe('chat and analyze describe the options they share alike', () => {
  // chat's help said --format had no pdf and --config was only ./datalyst.config.json, and it had no --runtime,
  // though both commands read their settings the same way (command-settings.ts).
  it.each(['--format', '--config', '--runtime', '--profile', '--sandbox', '--memory', '--cpus'])(
    '%s',
    async (option) => {
      const optionHelp = async (command: string): Promise<string> => {
        const help = (await runDatalyst([command, '--help'])).stdout;
        // An option's text runs to the next line that starts another option (or the end of the list).
        const match = new RegExp(`^ {2}${option} [\\s\\S]*?(?=^ {2}-|^\\S|$(?![\\s\\S]))`, 'm').exec(help);
        return (match?.[0] ?? '').replace(/\s+/g, ' ').trim();
      };
      const inAnalyze = await optionHelp('analyze');
      expect(inAnalyze).not.toBe('');
      expect(await optionHelp('chat')).toBe(inAnalyze);
    },
  );
});
