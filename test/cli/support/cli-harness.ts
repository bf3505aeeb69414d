import { EventEmitter } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { SandboxFactory } from '../../../src/index.ts';
import { readDatalystEnvironment } from '../../../src/config/index.ts';
import type { CliContext, SandboxPreparer } from '../../../src/cli/cli-context.ts';
import { runCli } from '../../../src/cli/program.ts';

/**
 * Runs `datalyst` in this process with captured output, a plain environment
 * object and a signal source the test can fire. The sandbox is the test's
 * (a fake session); everything else (config, checks, the agent loop, the
 * model client over HTTP, the report) is the real code.
 */
export interface CliRun {
  exitCode: number;
  stdout: string;
  stderr: string;
  exitedWith: number | null;
}

export interface CliHarnessOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  isTTY?: boolean;
  createSandbox?: SandboxFactory;
  prepareSandbox?: SandboxPreparer;
  /** Called with the signal source once the command runs (to send SIGINT). */
  signals?: EventEmitter;
  /** Sees each write to stdout as it happens. */
  onStdout?: (text: string) => void;
  /** The lines `datalyst chat` reads (default: process.stdin). */
  stdin?: CliContext['stdin'];
}

const unusedSandbox: SandboxFactory = () => Promise.reject(new Error('this test opens no sandbox'));

export async function runDatalyst(argv: readonly string[], options: CliHarnessOptions = {}): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  let exitedWith: number | null = null;
  const signals = options.signals ?? new EventEmitter();
  const context: CliContext = {
    stdout: {
      write: (text) => {
        stdout += text;
        options.onStdout?.(text);
      },
      isTTY: options.isTTY ?? false,
      columns: 100,
    },
    stderr: { write: (text) => (stderr += text), isTTY: options.isTTY ?? false },
    env: readDatalystEnvironment(options.env ?? {}),
    cwd: options.cwd ?? process.cwd(),
    now: () => new Date(2025, 2, 14, 9, 30, 15),
    signals: signals as unknown as Pick<NodeJS.Process, 'on' | 'off'>,
    exit: (code) => {
      exitedWith = code;
    },
    createSandbox: options.createSandbox ?? unusedSandbox,
    prepareSandbox: options.prepareSandbox ?? (() => Promise.resolve(undefined)),
    ...(options.stdin === undefined ? {} : { stdin: options.stdin }),
  };
  const exitCode = await runCli(argv, context);
  return { exitCode, stdout, stderr, exitedWith };
}

const temporaryDirs: string[] = [];

export async function temporaryDir(prefix = 'datalyst-cli-'): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  temporaryDirs.push(dir);
  return dir;
}

export async function removeTemporaryDirs(): Promise<void> {
  while (temporaryDirs.length > 0) {
    const dir = temporaryDirs.pop();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  }
}
