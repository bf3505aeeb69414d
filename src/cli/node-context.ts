import { readDatalystEnvironment } from '../config/env.ts';
import type { CliContext } from './cli-context.ts';
import { pipeSafeOutput } from './pipe-output.ts';

// Docker, the sandbox and their dependencies load when a command first needs
// them: `datalyst report`, `--help` and the like start without them.
const createSandbox: CliContext['createSandbox'] = async (options) =>
  (await import('../sandbox/index.ts')).createSandbox(options);
const createWarmPool: NonNullable<CliContext['createWarmPool']> = async (options) =>
  (await import('../sandbox/index.ts')).createWarmPool(options);
const prepareDockerSandbox: CliContext['prepareSandbox'] = async (request) =>
  (await import('./docker-preflight.ts')).prepareDockerSandbox(request);

/** The context of the real process: its streams, environment, signals and Docker. */
export function createNodeContext(): CliContext {
  return {
    stdout: pipeSafeOutput(process.stdout),
    stderr: pipeSafeOutput(process.stderr),
    env: readDatalystEnvironment(process.env),
    cwd: process.cwd(),
    now: () => new Date(),
    signals: process,
    exit: (code) => process.exit(code),
    createSandbox,
    createWarmPool,
    prepareSandbox: prepareDockerSandbox,
  };
}
