import Docker from 'dockerode';
import { engineRuntimes } from '../../src/cli/docker-probe.ts';

/**
 * Runs once before the runsc test project. Its tests never skip: without
 * gVisor registered with the engine they fail here, with the fix.
 */
export default async function setup(): Promise<void> {
  const runsc = engineRuntimes(await new Docker().info()).find((runtime) => runtime.name === 'runsc');
  if (runsc === undefined || !runsc.args.includes('--network=none')) {
    throw new Error(
      'The runsc tests need gVisor registered with the engine (runtime "runsc", runtimeArgs --network=none), and it is not. Run `datalyst setup --gvisor` (npm test does).',
    );
  }
  console.error(
    `[runsc tests] every session runs under gVisor (${runsc.path ?? 'runsc'} ${runsc.args.join(' ')})`,
  );
}
