import type { Command } from 'commander';
import { z } from 'zod';
import { DatalystError, SandboxUnavailableError } from '../../errors/index.ts';
import type { CliContext } from '../cli-context.ts';
import { probeDocker } from '../docker-probe.ts';
import { ExitCode, exitCodeForError, exitCodeHelpFor } from '../exit-codes.ts';
import { formatDuration } from '../format.ts';
import { handleInterrupts } from '../interrupt.ts';
import type { ExitCodeSink } from '../program.ts';
import { printError } from '../program.ts';
import { ProgressRenderer } from '../progress-renderer.ts';
import { colorEnabled } from '../terminal-style.ts';

const setupHelp = `
Builds the runner image (datalyst/python-runner:<hash of docker/python-runner>)
from Debian trixie's Python stack. Quick when an image with the same inputs
exists. Without a registry it uses a local base (scripts/make-base-image.sh,
debootstrap) or DATALYST_BASE_IMAGE.

The Docker engine itself is not installed here: start Docker yourself, or on
Debian/Ubuntu as root run scripts/setup-engine.sh (npm run demo does both).

--gvisor also installs gVisor (Debian's runsc, as root) and registers it with
the local engine: one "runsc" entry merged into /etc/docker/daemon.json (with
runtimeArgs --network=none; other keys kept), then the engine reloaded with
SIGHUP (running containers are kept). For a remote engine, without root or
off Debian it prints the steps to do by hand. Then use --runtime runsc.

Examples:
  $ datalyst setup
  $ datalyst setup --gvisor
  $ datalyst setup --force
  $ datalyst setup --base-image debian:trixie-slim

${exitCodeHelpFor([
  [ExitCode.answered, 'the runner image is built (now or before)'],
  [ExitCode.internal, 'internal error (a bug in Datalyst)'],
  [ExitCode.usage, 'a bad option'],
  [ExitCode.sandboxUnavailable, 'no Docker engine answers, or the image build failed'],
  [ExitCode.cancelled, 'cancelled (Ctrl-C)'],
])}`;

const setupOptionsSchema = z.object({
  force: z.boolean().optional(),
  baseImage: z.string().optional(),
  quiet: z.boolean().optional(),
  gvisor: z.boolean().optional(),
});
type SetupCommandOptions = z.infer<typeof setupOptionsSchema>;

export function defineSetupCommand(program: Command, context: CliContext, setExitCode: ExitCodeSink): void {
  program
    .command('setup')
    .description('Build the runner image the sandbox runs code in.')
    .option('--force', 'build even when an image with the same inputs exists')
    .option('--base-image <image>', 'base image to build on (env DATALYST_BASE_IMAGE)')
    .option('--gvisor', 'also install and register gVisor (runsc) with the local engine')
    .option('--quiet', 'print only errors and the result')
    .addHelpText('after', setupHelp)
    .action(async (rawOptions: unknown) => {
      setExitCode(await runSetup(context, setupOptionsSchema.parse(rawOptions)));
    });
}

async function runSetup(context: CliContext, options: SetupCommandOptions): Promise<number> {
  const renderer = new ProgressRenderer({
    write: (text) => context.stdout.write(text),
    live: false,
    color: colorEnabled(context.stdout.isTTY, context.env),
    quiet: options.quiet === true,
  });
  const interrupts = handleInterrupts({
    source: context.signals,
    onFirst: () => renderer.warn('Cancelling the build. Ctrl-C again quits at once.'),
    onSecond: () => context.exit(ExitCode.cancelled),
  });
  try {
    // dockerode and the image builder load with this command, not with the CLI.
    const [{ default: Docker }, { ensureRunnerImage }] = await Promise.all([
      import('dockerode'),
      import('../../sandbox/runner-image.ts'),
    ]);
    const docker = new Docker();
    const facts = await probeDocker(docker, context.env.dockerHost);
    renderer.info(`Docker engine ${facts.version} answers.`);
    const ensured = await ensureRunnerImage({
      docker,
      ...(options.force === true ? { force: true } : {}),
      ...(options.baseImage === undefined ? {} : { baseImage: options.baseImage }),
      onProgress: (line) => renderer.info(`  ${line}`),
      signal: interrupts.signal,
    });
    renderer.result(
      ensured.built
        ? `Built ${ensured.image} from ${ensured.baseImage ?? 'its base'} in ${formatDuration(ensured.durationMs)}.`
        : `The runner image ${ensured.image} is up to date.`,
    );
    if (options.gvisor === true) {
      const { setUpGvisor } = await import('../gvisor-setup.ts');
      const outcome = await setUpGvisor({
        docker,
        dockerHost: context.env.dockerHost,
        log: (line) => renderer.info(line),
        signal: interrupts.signal,
      });
      if (outcome.status === 'manual') {
        renderer.warn(`gVisor was not set up: ${outcome.reason}. To set it up by hand:`);
        for (const [index, step] of outcome.steps.entries()) renderer.warn(`  ${index + 1}. ${step}`);
        return ExitCode.sandboxUnavailable;
      }
      for (const change of outcome.changed) renderer.info(`  ${change}`);
      renderer.result(
        `gVisor is ready: the engine runs runsc (${outcome.runtime.path ?? 'runsc'} ${outcome.runtime.args.join(' ')}); use --runtime runsc or DATALYST_RUNTIME=runsc.`,
      );
    }
    return ExitCode.answered;
  } catch (error) {
    if (interrupts.interrupted) {
      renderer.warn('Cancelled; the image was not built.');
      return ExitCode.cancelled;
    }
    // Everything setup does talks to Docker: a raw engine error is the sandbox being unavailable.
    const mapped = DatalystError.isInstance(error)
      ? error
      : new SandboxUnavailableError(
          `Setting up the runner image failed: ${error instanceof Error ? error.message : String(error)}`,
          {
            fix: 'Run `datalyst doctor` to check the engine, then `datalyst setup` again.',
            cause: error,
          },
        );
    printError(context, mapped);
    return exitCodeForError(mapped);
  } finally {
    interrupts.dispose();
    renderer.close();
  }
}
