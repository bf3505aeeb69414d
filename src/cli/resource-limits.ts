import type Docker from 'dockerode';
import { z } from 'zod';
import { ConfigError } from '../errors/index.ts';
import { formatBytes } from './format.ts';

/** Below this the kernel cannot import pandas and profile a workspace. */
export const MIN_SANDBOX_MEMORY_MB = 256;

/** What the engine has to give: its CPUs and its memory. */
export interface EngineCapacity {
  cpus: number;
  memoryBytes: number;
}

const infoSchema = z.object({ NCPU: z.number().int().positive(), MemTotal: z.number().positive() });

/** The engine's CPUs and memory (`docker info`), as the limits are checked against them. */
export async function engineCapacity(docker: Docker): Promise<EngineCapacity | null> {
  const parsed = infoSchema.safeParse(await docker.info());
  return parsed.success ? { cpus: parsed.data.NCPU, memoryBytes: parsed.data.MemTotal } : null;
}

const whereToChange = (option: string, key: string, variable: string) =>
  `${option} on the command line, "${key}" in the config file, or ${variable}`;

/**
 * Refuses, before a container starts, limits the engine cannot give: more
 * CPUs than it has (Docker refuses the container, after the run began),
 * more memory than it has, or too little for the kernel. A ConfigError:
 * exit 2, and the message names the option to change.
 */
export function checkSandboxLimits(
  limits: { cpus: number; memoryMb: number },
  capacity: EngineCapacity | null,
): void {
  const memoryOption = whereToChange('--memory', 'memoryMb', 'DATALYST_MEMORY_MB');
  if (limits.memoryMb < MIN_SANDBOX_MEMORY_MB) {
    throw new ConfigError(
      `The sandbox memory (${limits.memoryMb} MB) is below the ${MIN_SANDBOX_MEMORY_MB} MB the Python kernel needs.`,
      `Give it at least ${MIN_SANDBOX_MEMORY_MB} MB (e.g. --memory 1g): ${memoryOption}.`,
    );
  }
  if (capacity === null) return;
  if (limits.cpus > capacity.cpus) {
    throw new ConfigError(
      `The sandbox asks for ${limits.cpus} CPUs; the Docker engine has ${capacity.cpus}.`,
      `Ask for ${capacity.cpus} or fewer (e.g. --cpus ${capacity.cpus}): ${whereToChange('--cpus', 'cpus', 'DATALYST_CPUS')}.`,
    );
  }
  if (limits.memoryMb * 1024 * 1024 > capacity.memoryBytes) {
    const availableMb = Math.floor(capacity.memoryBytes / 1024 / 1024);
    throw new ConfigError(
      `The sandbox asks for ${limits.memoryMb} MB of memory; the Docker engine has ${formatBytes(capacity.memoryBytes)}.`,
      `Ask for less than ${availableMb} MB (e.g. --memory ${Math.max(MIN_SANDBOX_MEMORY_MB, Math.floor(availableMb / 2))}m): ${memoryOption}.`,
    );
  }
}
