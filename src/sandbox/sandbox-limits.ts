import { z } from 'zod';
import { ConfigError } from '../errors/index.ts';
import type { SandboxBackendName, SandboxLimits } from './sandbox.ts';

/** Every limit's default, in one place (the CLI's defaults match these). */
export const defaultSandboxLimits: Readonly<Required<SandboxLimits>> = Object.freeze({
  cellTimeoutMs: 120_000,
  interruptGraceMs: 5_000,
  memoryMb: 2048,
  cpus: 1.5,
  pidsLimit: 256,
  maxOutputBytes: 1024 * 1024,
  workdirMb: 1024,
  scratchMb: 256,
  maxFileBytes: 512 * 1024 * 1024,
  maxOpenFiles: 1024,
  sessionTimeoutMs: 6 * 60 * 60 * 1000,
  maxWorkspaceMb: 2048,
  maxWorkspaceFiles: 10_000,
});

/**
 * How the workspace reaches a Docker session: `bind` mounts the host folder
 * read-only (a local engine only), `volume` copies it into a volume over the
 * Engine API (any engine), `auto` picks `bind` where it can.
 */
export type InputTransfer = 'auto' | 'bind' | 'volume';
const inputTransfers: readonly InputTransfer[] = ['auto', 'bind', 'volume'];

/** What the sandbox takes from the environment; read once per process. */
export interface SandboxEnvironment {
  /** `DATALYST_SANDBOX`: `docker` or `local`. */
  backend: SandboxBackendName | undefined;
  /** `DATALYST_IMAGE`: a runner image to use instead of the one built from docker/python-runner. */
  image: string | undefined;
  /**
   * `DATALYST_CELL_TIMEOUT_MS`, `DATALYST_MEMORY_MB`, `DATALYST_CPUS`, `DATALYST_SESSION_TIMEOUT_MS`,
   * `DATALYST_MAX_WORKSPACE_MB`, `DATALYST_MAX_WORKSPACE_FILES`.
   */
  limits: Partial<SandboxLimits>;
  /** `DATALYST_INPUT_TRANSFER`: `auto` (default), `bind` or `volume`. */
  inputTransfer: InputTransfer | undefined;
}

const positiveNumber = z.coerce.number().positive().finite();
const positiveInteger = z.coerce.number().int().positive();

/** Each variable, its schema, and what a valid value is (for the message when it is not). */
const environmentLimits = {
  cellTimeoutMs: ['DATALYST_CELL_TIMEOUT_MS', positiveInteger, 'a whole number of milliseconds above 0'],
  memoryMb: ['DATALYST_MEMORY_MB', positiveInteger, 'a whole number of MiB above 0'],
  cpus: ['DATALYST_CPUS', positiveNumber, 'a number of CPUs above 0, e.g. 1.5'],
  sessionTimeoutMs: [
    'DATALYST_SESSION_TIMEOUT_MS',
    positiveInteger,
    'a whole number of milliseconds above 0',
  ],
  maxWorkspaceMb: ['DATALYST_MAX_WORKSPACE_MB', positiveNumber, 'a number of MiB above 0'],
  maxWorkspaceFiles: ['DATALYST_MAX_WORKSPACE_FILES', positiveInteger, 'a whole number of files above 0'],
} as const satisfies Partial<Record<keyof SandboxLimits, readonly [string, z.ZodType<number>, string]>>;

function readVariable(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/** Parses the sandbox's variables; a malformed value is a `ConfigError` naming it. */
export function readSandboxEnvironment(env: NodeJS.ProcessEnv = process.env): SandboxEnvironment {
  const limits: Partial<SandboxLimits> = {};
  for (const [key, [name, schema, expected]] of Object.entries(environmentLimits)) {
    const raw = readVariable(env, name);
    if (raw === undefined) continue;
    const parsed = schema.safeParse(raw);
    if (!parsed.success) {
      throw new ConfigError(`${name}=${raw} is not ${expected}.`, `Set ${name} to ${expected}, or unset it.`);
    }
    limits[key as keyof typeof environmentLimits] = parsed.data;
  }
  const backend = readVariable(env, 'DATALYST_SANDBOX');
  if (backend !== undefined && backend !== 'docker' && backend !== 'local') {
    throw new ConfigError(
      `DATALYST_SANDBOX=${backend} is not a sandbox backend.`,
      'Set DATALYST_SANDBOX to docker or local.',
    );
  }
  const inputTransfer = readVariable(env, 'DATALYST_INPUT_TRANSFER');
  if (inputTransfer !== undefined && !inputTransfers.includes(inputTransfer as InputTransfer)) {
    throw new ConfigError(
      `DATALYST_INPUT_TRANSFER=${inputTransfer} is not a way to give the sandbox its inputs.`,
      'Set DATALYST_INPUT_TRANSFER to auto, bind or volume, or unset it.',
    );
  }
  return {
    backend,
    image: readVariable(env, 'DATALYST_IMAGE'),
    limits,
    inputTransfer: inputTransfer as InputTransfer | undefined,
  };
}

let cachedEnvironment: SandboxEnvironment | undefined;

/** The process environment's sandbox settings, parsed on first use. */
export function sandboxEnvironment(): SandboxEnvironment {
  cachedEnvironment ??= readSandboxEnvironment();
  return cachedEnvironment;
}

/** Defaults, then the environment, then the caller's values; each value is checked. */
export function resolveSandboxLimits(
  overrides: Partial<SandboxLimits> = {},
  environment: SandboxEnvironment = sandboxEnvironment(),
): Required<SandboxLimits> {
  const limits: Required<SandboxLimits> = { ...defaultSandboxLimits, ...environment.limits };
  for (const [key, value] of Object.entries(overrides) as [keyof SandboxLimits, number | undefined][]) {
    if (value === undefined) continue;
    if (!Number.isFinite(value) || value <= 0) {
      throw new ConfigError(
        `The sandbox limit ${key} must be a positive number, not ${value}.`,
        `Pass a positive ${key}.`,
      );
    }
    limits[key] = value;
  }
  return limits;
}
