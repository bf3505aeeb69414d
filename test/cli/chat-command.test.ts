import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createFakeSandbox, printed } from '../agent/support/fake-session.ts';
import { removeTemporaryDirs, runDatalyst, temporaryDir } from './support/cli-harness.ts';

/**
 * `datalyst chat` in-process with the offline analyst, its lines from a
 * stream (as in a pipe): the real commands, thread and report; only the
 * sandbox is a fake.
 */

afterEach(removeTemporaryDirs);

async function workspace(): Promise<string> {
  const dir = await temporaryDir('datalyst-chat-ws-');
  await writeFile(path.join(dir, 'sales.csv'), 'region,revenue\nnorth,10\nsouth,20\n');
  return dir;
}

async function chat(lines: string[], flags: string[], cwd?: string) {
  const sandbox = createFakeSandbox({ run: () => printed('30\n') });
  const run = await runDatalyst(['chat', await workspace(), '--offline', ...flags], {
    createSandbox: sandbox.factory,
    stdin: Readable.from(lines.map((line) => `${line}\n`)),
    ...(cwd === undefined ? {} : { cwd }),
  });
  return { run, sandbox };
}

describe('datalyst chat', () => {
  it('refuses an --out that holds files before preparing the sandbox', async () => {
    const out = await temporaryDir();
    await writeFile(path.join(out, 'report.html'), 'previous');
    let sandboxPrepared = false;
    const run = await runDatalyst(['chat', await workspace(), '--offline', '--out', out], {
      stdin: Readable.from([]),
      prepareSandbox: () => {
        sandboxPrepared = true;
        return Promise.resolve(undefined);
      },
    });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('already holds files');
    expect(sandboxPrepared).toBe(false);
    expect(await readdir(out)).toEqual(['report.html']);
  });

  it('/report before any question says there is nothing to report yet', async () => {
    const out = path.join(await temporaryDir(), 'run');
    const { run } = await chat(['/report', '/exit'], ['--out', out]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).toContain('Nothing to report yet: ask a question first.');
    expect(run.stderr).toBe('');
  });

  it('/help prints the prompt’s help whole: how to type a question, then every command, none cut', async () => {
    const out = path.join(await temporaryDir(), 'run');
    const { run } = await chat(['/help', '/exit'], ['--out', out]);
    expect(run.exitCode, run.stderr).toBe(0);
    const help = run.stdout.slice(run.stdout.indexOf('Type a question'));
    expect(help).toMatch(/^Type a question and press Enter\. Line editing/);
    expect(help).toContain('at the prompt shows how to leave). Commands:\n');
    for (const line of [
      '  /report   write the report now and print where it is',
      "  /files    list the workspace's files and the files the code wrote",
      '  /help     this list',
      '  /exit     end the session (Ctrl-D too); the report is written on exit',
    ]) {
      expect(help).toContain(`${line}\n`);
    }
    // The same block is part of `chat --help`.
    const usage = await runDatalyst(['chat', '--help']);
    expect(usage.stdout).toContain(help.slice(0, help.indexOf('on exit') + 'on exit'.length));
  });

  it('/exit before any question leaves no folder it created, and keeps every folder that was there', async () => {
    const base = await temporaryDir();
    const out = path.join(base, 'new', 'run');
    const explicit = await chat(['/exit'], ['--out', out]);
    expect(explicit.run.exitCode, explicit.run.stderr).toBe(0);
    expect(explicit.run.stdout).toContain('No question was asked; nothing was written.');
    expect(await readdir(base)).toEqual([]);

    // The default runs/<time>-<workspace>: neither it nor runs/ is left behind.
    const cwd = await temporaryDir();
    expect((await chat(['/exit'], [], cwd)).run.exitCode).toBe(0);
    expect(await readdir(cwd)).toEqual([]);

    // An empty --out that was there before stays; so does a runs/ that holds earlier runs.
    await mkdir(path.join(cwd, 'empty'));
    await chat(['/exit'], ['--out', path.join(cwd, 'empty')]);
    await mkdir(path.join(cwd, 'runs', 'earlier'), { recursive: true });
    await chat(['/exit'], [], cwd);
    expect((await readdir(cwd)).sort()).toEqual(['empty', 'runs']);
    expect(await readdir(path.join(cwd, 'runs'))).toEqual(['earlier']);
  });
});
