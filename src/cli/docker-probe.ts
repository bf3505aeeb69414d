import type Docker from 'dockerode';
import { z } from 'zod';
import { SandboxUnavailableError } from '../errors/index.ts';

/**
 * What `setup` and `doctor` ask the Docker engine: does it answer, which
 * version, can it enforce the limits the sandbox sets. dockerode picks the
 * engine the way the docker CLI does (DOCKER_HOST, else the local socket).
 */

export interface DockerFacts {
  /** e.g. `20.10.24+dfsg1`. */
  version: string;
  apiVersion: string;
  os: string;
  arch: string;
  memoryLimit: boolean;
  swapLimit: boolean;
  pidsLimit: boolean;
  cgroupVersion: string | null;
  /** The OCI runtimes the engine has registered (`runc`, `runsc`, …), by name, sorted. */
  runtimes: EngineRuntime[];
  /** The runtime a container gets when it names none; null when the engine does not say. */
  defaultRuntime: string | null;
}

export interface EngineRuntime {
  name: string;
  /** The binary, when the engine says (`/usr/bin/runsc`). */
  path: string | null;
  /** Arguments the engine passes to it (daemon.json `runtimeArgs`). */
  args: string[];
}

// Only the fields used here: the engine's answers are outside data.
const versionSchema = z.object({
  Version: z.string(),
  ApiVersion: z.string(),
  Os: z.string().optional(),
  Arch: z.string().optional(),
});
const infoSchema = z.object({
  MemoryLimit: z.boolean().optional(),
  SwapLimit: z.boolean().optional(),
  PidsLimit: z.boolean().optional(),
  CgroupVersion: z.string().optional(),
  Runtimes: z
    .record(z.string(), z.object({ path: z.string().optional(), runtimeArgs: z.array(z.string()).nullish() }))
    .nullish(),
  DefaultRuntime: z.string().optional(),
});

/** The runtimes of an Engine API `/info` answer. */
export function engineRuntimes(info: unknown): EngineRuntime[] {
  const runtimes = infoSchema.parse(info).Runtimes ?? {};
  return Object.entries(runtimes)
    .map(([name, runtime]) => ({ name, path: runtime.path ?? null, args: runtime.runtimeArgs ?? [] }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

export function engineFix(dockerHost: string | undefined): string {
  return dockerHost !== undefined
    ? `DOCKER_HOST=${dockerHost} does not answer: start that engine, or unset DOCKER_HOST to use the local one.`
    : 'Start Docker (Docker Desktop, or `sudo systemctl start docker`); on Debian/Ubuntu as root, `bash scripts/setup-engine.sh` installs and starts one.';
}

function withTimeout<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what} did not answer within ${timeoutMs / 1000} s`)),
      timeoutMs,
    );
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Pings the engine; a `SandboxUnavailableError` with the fix within `timeoutMs` when none answers. */
export async function probeDocker(
  docker: Docker,
  dockerHost: string | undefined,
  timeoutMs = 5000,
): Promise<DockerFacts> {
  try {
    await withTimeout(docker.ping(), timeoutMs, 'The Docker engine');
    const [version, info] = await withTimeout(
      Promise.all([docker.version(), docker.info()]),
      timeoutMs,
      'The Docker engine',
    );
    const v = versionSchema.parse(version);
    const i = infoSchema.parse(info);
    return {
      version: v.Version,
      apiVersion: v.ApiVersion,
      os: v.Os ?? 'unknown',
      arch: v.Arch ?? 'unknown',
      memoryLimit: i.MemoryLimit ?? false,
      swapLimit: i.SwapLimit ?? false,
      pidsLimit: i.PidsLimit ?? false,
      cgroupVersion: i.CgroupVersion ?? null,
      runtimes: engineRuntimes(info),
      defaultRuntime: i.DefaultRuntime ?? null,
    };
  } catch (error) {
    throw new SandboxUnavailableError(
      `No Docker engine answers${dockerHost !== undefined ? ` at ${dockerHost}` : ''}: ${error instanceof Error ? error.message : String(error)}.`,
      { fix: engineFix(dockerHost), cause: error },
    );
  }
}

/** The tags of the images in a repository, e.g. every `datalyst/python-runner:*`. */
export async function listImageTags(docker: Docker, repository: string): Promise<string[]> {
  const images = z
    .array(z.object({ RepoTags: z.array(z.string()).nullish() }))
    .parse(await docker.listImages());
  return images.flatMap((image) => image.RepoTags ?? []).filter((tag) => tag.startsWith(`${repository}:`));
}

/** The image's size and creation time, or null when it is not there. */
export async function inspectImage(
  docker: Docker,
  name: string,
): Promise<{ sizeBytes: number; created: string } | null> {
  try {
    const parsed = z
      .object({ Size: z.number(), Created: z.string() })
      .parse(await docker.getImage(name).inspect());
    return { sizeBytes: parsed.Size, created: parsed.Created };
  } catch {
    return null;
  }
}
