import type { DatalystEnvironment } from '../config/index.ts';
import type { SandboxFactory, WarmPool, WarmPoolOptions } from '../index.ts';

/** One output stream of the CLI. */
export interface CliOutput {
  write(text: string): void;
  isTTY: boolean;
  /** Terminal width, when a terminal. */
  columns?: number;
}

/**
 * Pre-flight for a sandbox backend: for Docker, the engine answers and the
 * runner image is there (built on first use). Returns the image to use, or
 * undefined for the sandbox's default.
 */
export type SandboxPreparer = (request: {
  backend: 'docker' | 'local';
  image: string | null;
  /** The limits the run asks for, checked against what the engine has (a ConfigError when it cannot give them). */
  limits?: { cpus: number; memoryMb: number };
  onProgress: (line: string) => void;
  signal: AbortSignal;
}) => Promise<string | undefined>;

/**
 * Everything the commands take from the process, so that tests run them in
 * the same process with their own streams, environment and sandbox.
 */
export interface CliContext {
  stdout: CliOutput;
  stderr: CliOutput;
  env: DatalystEnvironment;
  cwd: string;
  now: () => Date;
  /** Where SIGINT/SIGTERM come from. */
  signals: Pick<NodeJS.Process, 'on' | 'off'>;
  /** Ends the process at once (second Ctrl-C). */
  exit: (code: number) => void;
  createSandbox: SandboxFactory;
  /** Sessions started ahead, for `analyze --deep` (its sub-analyses take theirs from it). Absent: sessions open one by one with `createSandbox`. */
  createWarmPool?: (options: WarmPoolOptions) => Promise<WarmPool>;
  prepareSandbox: SandboxPreparer;
  /** Where `datalyst chat` reads its lines; default `process.stdin`. */
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
}
