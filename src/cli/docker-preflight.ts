import Docker from 'dockerode';
import { ImageMissingError } from '../errors/index.ts';
import { ensureRunnerImage, pingDocker, runnerImageTag } from '../sandbox/index.ts';
import type { SandboxPreparer } from './cli-context.ts';
import { formatBytes } from './format.ts';
import { checkSandboxLimits, engineCapacity } from './resource-limits.ts';

const PING_TIMEOUT_MS = 5000;

/**
 * Docker pre-flight for `analyze`: fail fast (exit 4, no run folder half made)
 * when no engine answers, exit 2 when the engine cannot give the limits asked
 * for, and build the runner image on first use instead of failing with
 * "image missing". Says what it found, so the wait before the run is not silent.
 */
export const prepareDockerSandbox: SandboxPreparer = async ({
  backend,
  image,
  limits,
  onProgress,
  signal,
}) => {
  if (backend !== 'docker') {
    if (limits !== undefined) checkSandboxLimits(limits, null);
    return image ?? undefined;
  }
  const docker = new Docker();
  await pingDocker(docker, PING_TIMEOUT_MS, signal);
  const capacity = await engineCapacity(docker).catch(() => null);
  if (limits !== undefined) checkSandboxLimits(limits, capacity);
  onProgress(
    capacity === null
      ? 'Docker engine answers.'
      : `Docker engine answers: ${capacity.cpus} CPUs, ${formatBytes(capacity.memoryBytes)} of memory.`,
  );
  const prepared = await prepareImage(docker, image, onProgress, signal);
  onProgress(`Runner image ${prepared} is ready.`);
  return prepared;
};

async function prepareImage(
  docker: Docker,
  image: string | null,
  onProgress: (line: string) => void,
  signal: AbortSignal,
): Promise<string> {
  if (image !== null) {
    await docker
      .getImage(image)
      .inspect()
      .catch((error: unknown) => {
        throw new ImageMissingError(image, error);
      });
    return image;
  }
  const tag = await runnerImageTag();
  const exists = await docker
    .getImage(tag)
    .inspect()
    .then(
      () => true,
      () => false,
    );
  if (exists) return tag;
  onProgress(
    `The runner image ${tag} is not built yet: building it now (a few minutes, once; \`datalyst setup\` does the same).`,
  );
  const ensured = await ensureRunnerImage({ docker, onProgress, signal });
  return ensured.image;
}
