// Builds the runner image when its inputs changed; prints where it stands.
import { ensureRunnerImage } from '../src/sandbox/runner-image.ts';

const quiet = process.argv.includes('--quiet');
const result = await ensureRunnerImage({ onProgress: (line) => quiet || console.error(line) });
console.error(
  result.built
    ? `[datalyst setup] built ${result.image} from ${result.baseImage} in ${(result.durationMs / 1000).toFixed(1)} s`
    : `[datalyst setup] runner image ${result.image} is up to date`,
);
