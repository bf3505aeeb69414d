import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import Docker from 'dockerode';
import { execa } from 'execa';
import { z } from 'zod';
import { SandboxUnavailableError } from '../errors/index.ts';

/**
 * The runner image: built from docker/python-runner and tagged with a hash of
 * everything in that folder, so a changed kernel or Dockerfile gives a new tag
 * and an unchanged one is reused without asking the engine to build.
 */

export const RUNNER_IMAGE_REPOSITORY = 'datalyst/python-runner';
export const IMAGE_INPUTS_LABEL = 'org.datalyst.inputs-hash';
/** Used where no registry answers: made by scripts/make-base-image.sh with debootstrap. */
export const LOCAL_BASE_IMAGE = 'datalyst/trixie-base:local';
export const REGISTRY_BASE_IMAGE = 'debian:trixie-slim';

const projectRoot = fileURLToPath(new URL('../../', import.meta.url));
export const runnerImageDir = join(projectRoot, 'docker', 'python-runner');

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile() && !entry.name.endsWith('.pyc'))
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)).split(sep).join('/'))
    .sort();
}

/** SHA-256 over the relative path and content of every build input. */
export async function runnerImageInputsHash(dir: string = runnerImageDir): Promise<string> {
  const hash = createHash('sha256');
  for (const file of await listFiles(dir)) {
    hash
      .update(file)
      .update('\0')
      .update(await readFile(join(dir, file)))
      .update('\0');
  }
  return hash.digest('hex');
}

let cachedTag: Promise<string> | undefined;

/** `datalyst/python-runner:<first 16 hex of the inputs hash>`, computed once per process. */
export function runnerImageTag(): Promise<string> {
  cachedTag ??= runnerImageInputsHash().then((hash) => `${RUNNER_IMAGE_REPOSITORY}:${hash.slice(0, 16)}`);
  return cachedTag;
}

export interface EnsureRunnerImageOptions {
  docker?: Docker;
  /** Base image; default `DATALYST_BASE_IMAGE`, else debian:trixie-slim, else the debootstrap base. */
  baseImage?: string;
  /** Build even when an image with the same inputs exists. */
  force?: boolean;
  onProgress?: (line: string) => void;
  signal?: AbortSignal;
}

export interface EnsuredImage {
  image: string;
  built: boolean;
  baseImage: string | null;
  durationMs: number;
}

async function imageExists(docker: Docker, name: string): Promise<boolean> {
  try {
    await docker.getImage(name).inspect();
    return true;
  } catch {
    return false;
  }
}

const progressSchema = z.object({
  stream: z.string().optional(),
  status: z.string().optional(),
  error: z.string().optional(),
});

function followProgress(
  docker: Docker,
  stream: NodeJS.ReadableStream,
  onLine: (line: string) => void,
): Promise<void> {
  return new Promise((resolve, reject) => {
    docker.modem.followProgress(
      stream,
      (error: Error | null, output: unknown[]) => {
        if (error) return reject(error);
        const failure = output
          .map((item) => progressSchema.safeParse(item))
          .find((p) => p.success && p.data.error);
        if (failure?.success && failure.data.error) return reject(new Error(failure.data.error));
        resolve();
      },
      (event: unknown) => {
        const parsed = progressSchema.safeParse(event);
        const text = parsed.success
          ? (parsed.data.stream ?? parsed.data.status ?? parsed.data.error)
          : undefined;
        if (text?.trim()) onLine(text.trimEnd());
      },
    );
  });
}

async function pullWithin(
  docker: Docker,
  image: string,
  timeoutMs: number,
  onLine: (line: string) => void,
): Promise<boolean> {
  const attempt = (async () => {
    const stream = await docker.pull(image);
    await followProgress(docker, stream, onLine);
    return true;
  })().catch(() => false);
  const timeout = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), timeoutMs).unref());
  return Promise.race([attempt, timeout]);
}

/**
 * Picks the base: an explicit one, one already present, a pulled
 * debian:trixie-slim, or (no registry) one made with debootstrap.
 */
async function resolveBaseImage(
  docker: Docker,
  options: EnsureRunnerImageOptions,
  onLine: (line: string) => void,
): Promise<string> {
  const explicit = options.baseImage ?? process.env['DATALYST_BASE_IMAGE'];
  if (explicit) return explicit;
  if (await imageExists(docker, REGISTRY_BASE_IMAGE)) return REGISTRY_BASE_IMAGE;
  if (await imageExists(docker, LOCAL_BASE_IMAGE)) return LOCAL_BASE_IMAGE;
  onLine(`Pulling ${REGISTRY_BASE_IMAGE}…`);
  if (await pullWithin(docker, REGISTRY_BASE_IMAGE, 60_000, onLine)) return REGISTRY_BASE_IMAGE;
  const script = join(projectRoot, 'scripts', 'make-base-image.sh');
  const canDebootstrap = process.platform === 'linux' && process.getuid?.() === 0 && existsSync(script);
  if (!canDebootstrap) {
    throw new SandboxUnavailableError(
      `No registry answered for ${REGISTRY_BASE_IMAGE} and no local base image exists.`,
      {
        fix: `Pull ${REGISTRY_BASE_IMAGE} when a registry is reachable, or as root on Debian run scripts/make-base-image.sh (debootstrap), or set DATALYST_BASE_IMAGE.`,
      },
    );
  }
  onLine(`No registry answered: making ${LOCAL_BASE_IMAGE} with debootstrap…`);
  await execa('bash', [script], {
    stdio: 'inherit',
    ...(options.signal ? { cancelSignal: options.signal } : {}),
  });
  return LOCAL_BASE_IMAGE;
}

/** Builds the runner image unless one built from the same inputs exists. */
export async function ensureRunnerImage(options: EnsureRunnerImageOptions = {}): Promise<EnsuredImage> {
  const started = performance.now();
  const docker = options.docker ?? new Docker();
  const onLine = options.onProgress ?? (() => {});
  const image = await runnerImageTag();
  if (!options.force && (await imageExists(docker, image))) {
    return { image, built: false, baseImage: null, durationMs: performance.now() - started };
  }
  const baseImage = await resolveBaseImage(docker, options, onLine);
  const inputsHash = await runnerImageInputsHash();
  onLine(`Building ${image} from ${baseImage}…`);
  const stream = await docker.buildImage(
    { context: runnerImageDir, src: await listFiles(runnerImageDir) },
    {
      t: image,
      buildargs: { BASE: baseImage },
      labels: { [IMAGE_INPUTS_LABEL]: inputsHash },
      rm: true,
      forcerm: true,
      ...(options.signal ? { abortSignal: options.signal } : {}),
    },
  );
  try {
    await followProgress(docker, stream, onLine);
  } catch (error) {
    throw new SandboxUnavailableError(`Building the runner image ${image} failed.`, {
      fix: 'Read the build output above; the image needs Debian packages from the mirror (check the network of the engine).',
      cause: error,
    });
  }
  return { image, built: true, baseImage, durationMs: performance.now() - started };
}
