import Docker from 'dockerode';
import { ImageMissingError } from '../errors/index.ts';
import { ensureRunnerImage, pingDocker, runnerImageTag } from '../sandbox/index.ts';
import type { SandboxPreparer } from './cli-context.ts';

const PING_TIMEOUT_MS = 5000;

/**
 * Docker pre-flight for `analyze`: fail fast (exit 4, no run folder half made)
 * when no engine answers, and build the runner image on first use instead of
 * failing with "image missing".
 */
export const prepareDockerSandbox: SandboxPreparer = async ({ backend, image, onProgress, signal }) => {
  if (backend !== 'docker') return image ?? undefined;
  const docker = new Docker();
  await pingDocker(docker, PING_TIMEOUT_MS, signal);
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
};
