import Docker from 'dockerode';
import { ensureRunnerImage } from '../../src/sandbox/runner-image.ts';

/**
 * Runs once before the Docker test project. Docker tests never skip: without
 * an engine they fail here, with the fix in the message.
 */
export default async function setup(): Promise<void> {
  const docker = new Docker();
  const answered = await Promise.race([
    docker.ping().then(
      () => true,
      () => false,
    ),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 10_000).unref()),
  ]);
  if (!answered) {
    throw new Error(
      'The Docker tests need a Docker engine and none answers. Run `npm test` (it starts one on Debian as root) or scripts/setup-engine.sh.',
    );
  }
  const { image, built } = await ensureRunnerImage({ onProgress: (line) => console.error(line) });
  console.error(`[docker tests] runner image ${image}${built ? ' (built now)' : ''}`);
}
