import type { Command } from 'commander';
import type Docker from 'dockerode';
import { z } from 'zod';
import { resolveModelSettings } from '../../config/analyze-settings.ts';
import { loadConfigFile } from '../../config/config-file.ts';
import { DatalystError } from '../../errors/index.ts';
import type { ModelSettings } from '../../config/index.ts';
import type { CliContext } from '../cli-context.ts';
import type { DoctorJson } from '../doctor-json-schema.ts';
import { JSON_LINES_SCHEMA_VERSION } from '../json-line-schema.ts';
import { engineFix, inspectImage, listImageTags, probeDocker, type DockerFacts } from '../docker-probe.ts';
import { ExitCode, exitCodeForError, exitCodeHelpFor, type ExitCodeValue } from '../exit-codes.ts';
import { formatBytes } from '../format.ts';
import { OPENAI_DEFAULT_BASE_URL } from '../openai-default.ts';
import type { ExitCodeSink } from '../program.ts';
import { printError } from '../program.ts';
import { colorEnabled, createTerminalStyle, sanitizeForTerminal } from '../terminal-style.ts';

const doctorHelp = `
Checks, and says what to fix for each:
  Docker        the engine answers (DOCKER_HOST or the local socket), its version
  Limits        the engine can enforce memory, swap and process limits (cgroups)
  Runtimes      the engine's OCI runtimes (runc; runsc for --runtime runsc, gVisor)
  Runner image  built, and built from the current docker/python-runner
  Model         if one is configured: GET <base-url>/models answers and lists it

Examples:
  $ datalyst doctor
  $ datalyst doctor --base-url http://localhost:8000/v1 --model DeepAnalyze-8B
  $ datalyst doctor --json | jq '.checks[] | select(.status == "fail")'

${exitCodeHelpFor([
  [ExitCode.answered, 'nothing failed (warnings allowed)'],
  [ExitCode.internal, 'internal error (a bug in Datalyst)'],
  [ExitCode.usage, 'a bad option or config file'],
  [ExitCode.sandboxUnavailable, 'Docker, its limits or the runner image failed'],
  [ExitCode.modelUnavailable, 'only the model endpoint failed'],
])}`;

const doctorOptionsSchema = z.object({
  model: z.string().optional(),
  baseUrl: z.string().optional(),
  apiKey: z.string().optional(),
  config: z.string().optional(),
  json: z.boolean().optional(),
});
type DoctorCommandOptions = z.infer<typeof doctorOptionsSchema>;

export type CheckStatus = 'ok' | 'warn' | 'fail' | 'info';

export interface DoctorCheck {
  name: string;
  status: CheckStatus;
  detail: string;
  /** What to do about a warning or failure (or how to turn on an optional part). */
  fix: string | null;
  /** The exit code a failure of this check gives. */
  failureExitCode: ExitCodeValue;
}

export function defineDoctorCommand(program: Command, context: CliContext, setExitCode: ExitCodeSink): void {
  program
    .command('doctor')
    .description('Check Docker, the runner image and the model endpoint, and say what to fix.')
    .option('--model <name>', 'model to look for (env DATALYST_MODEL)')
    .option('--base-url <url>', 'endpoint to check (env DATALYST_BASE_URL, OPENAI_BASE_URL)')
    .option('--api-key <key>', 'API key for the endpoint (env DATALYST_API_KEY, OPENAI_API_KEY)')
    .option(
      '--json',
      'one JSON object on stdout: every check with its status, detail and fix, and the exit code',
    )
    .option(
      '--config <file>',
      'config file (default: the nearest datalyst.config.json, here or in a folder above)',
    )
    .addHelpText('after', doctorHelp)
    .action(async (rawOptions: unknown) => {
      setExitCode(await runDoctor(context, doctorOptionsSchema.parse(rawOptions)));
    });
}

async function checkDocker(
  docker: Docker,
  context: CliContext,
): Promise<{ checks: DoctorCheck[]; facts: DockerFacts | null }> {
  const where = context.env.dockerHost ?? 'the local socket';
  try {
    const facts = await probeDocker(docker, context.env.dockerHost);
    const checks: DoctorCheck[] = [
      {
        name: 'Docker',
        status: 'ok',
        detail: `engine ${facts.version} (API ${facts.apiVersion}, ${facts.os}/${facts.arch}) at ${where}`,
        fix: null,
        failureExitCode: ExitCode.sandboxUnavailable,
      },
    ];
    const missing = [
      !facts.memoryLimit && 'memory',
      !facts.swapLimit && 'swap',
      !facts.pidsLimit && 'process (pids)',
    ].filter((item): item is string => typeof item === 'string');
    checks.push(
      missing.length === 0
        ? {
            name: 'Limits',
            status: 'ok',
            detail: `memory, swap and pids limits enforced${facts.cgroupVersion ? ` (cgroup v${facts.cgroupVersion})` : ''}`,
            fix: null,
            failureExitCode: ExitCode.sandboxUnavailable,
          }
        : {
            name: 'Limits',
            status: 'fail',
            detail: `the engine cannot enforce ${missing.join(', ')} limits; the sandbox refuses to start containers without them`,
            fix: 'Enable the memory cgroup and swap accounting (kernel command line: cgroup_enable=memory swapaccount=1, then reboot), or use an engine on cgroup v2.',
            failureExitCode: ExitCode.sandboxUnavailable,
          },
    );
    checks.push(checkRuntimes(facts, context));
    return { checks, facts };
  } catch (error) {
    return {
      checks: [
        {
          name: 'Docker',
          status: 'fail',
          detail: DatalystError.isInstance(error) ? error.message : String(error),
          fix: DatalystError.isInstance(error) ? error.fix : engineFix(context.env.dockerHost),
          failureExitCode: ExitCode.sandboxUnavailable,
        },
      ],
      facts: null,
    };
  }
}

/** The engine's runtimes; a failure only when the runtime asked for (DATALYST_RUNTIME) is not among them. */
function checkRuntimes(facts: DockerFacts, context: CliContext): DoctorCheck {
  const failureExitCode = ExitCode.sandboxUnavailable;
  const listed = facts.runtimes
    .map((runtime) => {
      const args = runtime.args.length > 0 ? ` ${runtime.args.join(' ')}` : '';
      return `${runtime.name}${runtime.name === facts.defaultRuntime ? ' (default)' : ''}${runtime.name === 'runsc' ? ` [gVisor${args}]` : ''}`;
    })
    .join(', ');
  const runsc = facts.runtimes.find((runtime) => runtime.name === 'runsc');
  const wanted = context.env.runtime;
  if (wanted !== undefined && !facts.runtimes.some((runtime) => runtime.name === wanted)) {
    return {
      name: 'Runtimes',
      status: 'fail',
      detail: `DATALYST_RUNTIME=${wanted}, but the engine has only ${listed || 'none it names'}`,
      fix:
        wanted === 'runsc'
          ? '`datalyst setup --gvisor` installs and registers gVisor (Debian, as root), or unset DATALYST_RUNTIME.'
          : 'Unset DATALYST_RUNTIME, or set it to runc or runsc.',
      failureExitCode,
    };
  }
  if (runsc === undefined) {
    return {
      name: 'Runtimes',
      status: 'info',
      detail: `${listed}; no gVisor (runsc)`,
      fix: '`datalyst setup --gvisor`, then --runtime runsc (stronger isolation, slower start and syscalls).',
      failureExitCode,
    };
  }
  if (!runsc.args.includes('--network=none')) {
    return {
      name: 'Runtimes',
      status: 'warn',
      detail: `${listed}; runsc is registered without --network=none, so sessions (no network) cannot start under it`,
      fix: '`datalyst setup --gvisor` adds the argument (or add "runtimeArgs": ["--network=none"] to its daemon.json entry and reload the engine).',
      failureExitCode,
    };
  }
  return { name: 'Runtimes', status: 'ok', detail: listed, fix: null, failureExitCode };
}

async function checkImage(docker: Docker, context: CliContext): Promise<DoctorCheck> {
  const failureExitCode = ExitCode.sandboxUnavailable;
  if (context.env.image !== undefined) {
    const found = await inspectImage(docker, context.env.image);
    return found
      ? {
          name: 'Runner image',
          status: 'ok',
          detail: `${context.env.image} (DATALYST_IMAGE, ${formatBytes(found.sizeBytes)})`,
          fix: null,
          failureExitCode,
        }
      : {
          name: 'Runner image',
          status: 'fail',
          detail: `DATALYST_IMAGE=${context.env.image} is not on this engine`,
          fix: 'Build or load that image, or unset DATALYST_IMAGE and run `datalyst setup`.',
          failureExitCode,
        };
  }
  const tag = await (await import('../../sandbox/runner-image.ts')).runnerImageTag();
  const found = await inspectImage(docker, tag);
  if (found) {
    return {
      name: 'Runner image',
      status: 'ok',
      detail: `${tag} (${formatBytes(found.sizeBytes)}, built ${found.created.slice(0, 16).replace('T', ' ')})`,
      fix: null,
      failureExitCode,
    };
  }
  const repository = tag.slice(0, tag.lastIndexOf(':'));
  const others = await listImageTags(docker, repository);
  return {
    name: 'Runner image',
    status: 'fail',
    detail:
      others.length > 0
        ? `${tag} is not built; ${others.join(', ')} ${others.length === 1 ? 'was' : 'were'} built from other inputs (docker/python-runner changed since)`
        : `${tag} is not built`,
    fix: 'Run `datalyst setup` (a few minutes the first time; `analyze` also builds it on first use).',
    failureExitCode,
  };
}

const modelListSchema = z.object({ data: z.array(z.object({ id: z.string() })) });

/** GET <base>/models with a short timeout: is the endpoint there, does it take the key, does it serve the model? */
export async function checkModelEndpoint(
  model: Extract<ModelSettings, { kind: 'endpoint' }>,
  timeoutMs: number,
): Promise<DoctorCheck> {
  const failureExitCode = ExitCode.modelUnavailable;
  const baseUrl = model.baseUrl ?? OPENAI_DEFAULT_BASE_URL;
  const url = `${baseUrl}/models`;
  let response: Response;
  try {
    response = await fetch(url, {
      headers: model.apiKey === null ? {} : { authorization: `Bearer ${model.apiKey}` },
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    const reason =
      error instanceof Error && error.name === 'TimeoutError'
        ? `no answer within ${timeoutMs / 1000} s`
        : error instanceof Error
          ? error.cause instanceof Error
            ? error.cause.message
            : error.message
          : String(error);
    return {
      name: 'Model',
      status: 'fail',
      detail: `${url}: ${reason}`,
      fix: 'Start the model server, or fix --base-url / DATALYST_BASE_URL (it usually ends in /v1).',
      failureExitCode,
    };
  }
  if (response.status === 401 || response.status === 403) {
    return {
      name: 'Model',
      status: 'fail',
      detail: `${url} refused the API key (HTTP ${response.status})`,
      fix: 'Set a valid key with --api-key or DATALYST_API_KEY / OPENAI_API_KEY.',
      failureExitCode,
    };
  }
  if (!response.ok) {
    return {
      name: 'Model',
      status: 'warn',
      detail: `${url} answered HTTP ${response.status}; the model "${model.id}" could not be checked`,
      fix: 'Some servers have no /models route; if the base URL is right, try a short analysis.',
      failureExitCode,
    };
  }
  const parsed = modelListSchema.safeParse(await response.json().catch(() => null));
  if (!parsed.success) {
    return {
      name: 'Model',
      status: 'warn',
      detail: `${url} answered, but not with a model list`,
      fix: 'Check that the base URL is an OpenAI-compatible API (it usually ends in /v1).',
      failureExitCode,
    };
  }
  const ids = parsed.data.data.map((entry) => entry.id);
  if (!ids.includes(model.id)) {
    return {
      name: 'Model',
      status: 'fail',
      detail: `${baseUrl} does not serve "${model.id}"; it serves ${ids.length === 0 ? 'no model' : ids.slice(0, 8).join(', ') + (ids.length > 8 ? ` and ${ids.length - 8} more` : '')}`,
      fix: 'Pass one of the served names with --model (or DATALYST_MODEL).',
      failureExitCode,
    };
  }
  return {
    name: 'Model',
    status: 'ok',
    detail: `${baseUrl} serves "${model.id}" (profile ${model.profile})`,
    fix: null,
    failureExitCode,
  };
}

function printChecks(context: CliContext, checks: readonly DoctorCheck[]): void {
  const style = createTerminalStyle(colorEnabled(context.stdout.isTTY, context.env));
  const marks: Record<CheckStatus, string> = {
    ok: style.green('✓'),
    warn: style.yellow('!'),
    fail: style.red('✗'),
    info: style.dim('–'),
  };
  const width = Math.max(...checks.map((check) => check.name.length)) + 2;
  for (const check of checks) {
    context.stdout.write(
      `${marks[check.status]} ${check.name.padEnd(width)}${sanitizeForTerminal(check.detail)}\n`,
    );
    if (check.fix !== null)
      context.stdout.write(
        `  ${' '.repeat(width)}${style.bold(check.status === 'info' ? 'to use one:' : 'fix:')} ${check.fix}\n`,
      );
  }
}

async function runDoctor(context: CliContext, options: DoctorCommandOptions): Promise<number> {
  let model: ModelSettings;
  try {
    const configFile = await loadConfigFile(options.config ?? context.env.configPath, context.cwd);
    model = resolveModelSettings({ flags: options, env: context.env, configFile });
  } catch (error) {
    printError(context, error);
    const exitCode = exitCodeForError(error);
    if (options.json === true && DatalystError.isInstance(error)) {
      writeDoctorJson(context, [], exitCode, {
        code: error.code,
        message: error.message,
        fix: error.fix,
        fault: error.fault,
      });
    }
    return exitCode;
  }
  const checks: DoctorCheck[] = [
    { name: 'Node.js', status: 'ok', detail: process.version, fix: null, failureExitCode: ExitCode.internal },
  ];
  // dockerode loads with the commands that talk to Docker, not with the CLI.
  const { default: DockerClient } = await import('dockerode');
  const docker = new DockerClient();
  const { checks: dockerChecks, facts } = await checkDocker(docker, context);
  checks.push(...dockerChecks);
  if (facts !== null) checks.push(await checkImage(docker, context));
  if (model.kind === 'endpoint') {
    checks.push(await checkModelEndpoint(model, 5000));
  } else {
    checks.push({
      name: 'Model',
      status: 'info',
      detail: 'none configured: analyses use the built-in offline analyst',
      fix: '--model <name> [--base-url <url>], or DATALYST_MODEL and DATALYST_BASE_URL / OPENAI_BASE_URL.',
      failureExitCode: ExitCode.modelUnavailable,
    });
    if (model.note !== null)
      checks.push({
        name: 'Model',
        status: 'warn',
        detail: model.note,
        fix: null,
        failureExitCode: ExitCode.modelUnavailable,
      });
  }
  const exitCode = doctorExitCode(checks);
  if (options.json === true) writeDoctorJson(context, checks, exitCode, null);
  else printChecks(context, checks);
  return exitCode;
}

function doctorExitCode(checks: readonly DoctorCheck[]): ExitCodeValue {
  const failed = checks.filter((check) => check.status === 'fail');
  if (failed.length === 0) return ExitCode.answered;
  return failed.some((check) => check.failureExitCode === ExitCode.sandboxUnavailable)
    ? ExitCode.sandboxUnavailable
    : (failed[0]?.failureExitCode ?? ExitCode.internal);
}

/** `doctor --json`: the checks for scripts and CI, in the same versioned frame as analyze's lines. */
function writeDoctorJson(
  context: CliContext,
  checks: readonly DoctorCheck[],
  exitCode: number,
  error: DoctorJson['error'],
): void {
  const report: DoctorJson = {
    type: 'doctor',
    time: context.now().toISOString(),
    schemaVersion: JSON_LINES_SCHEMA_VERSION,
    ok: exitCode === ExitCode.answered,
    exitCode,
    checks: checks.map(({ name, status, detail, fix }) => ({ name, status, detail, fix })),
    error,
  };
  context.stdout.write(`${JSON.stringify(report)}\n`);
}
