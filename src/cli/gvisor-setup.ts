import { constants } from 'node:fs';
import { access, readFile, rename, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type Docker from 'dockerode';
import { execa } from 'execa';
import { z } from 'zod';
import { ConfigError, SandboxUnavailableError } from '../errors/index.ts';
import { engineRuntimes, type EngineRuntime } from './docker-probe.ts';

/**
 * `datalyst setup --gvisor`: installs gVisor's `runsc` and registers it with
 * the local Docker engine, where that can be done safely (Debian's package, as
 * root, an engine on this machine); elsewhere it says what to do by hand.
 *
 * Registration merges one entry into /etc/docker/daemon.json (every other key
 * is kept; a file that is not valid JSON is left alone) and reloads the engine
 * with SIGHUP: a reload keeps every running container, a restart would not.
 */

/**
 * The entry Datalyst needs: without `--network=none`, runsc cannot start a
 * `--network none` container. Not `--oci-seccomp` (which would load the
 * project's seccomp allowlist inside gVisor): with Debian's runsc 2022-12 it
 * made every `threading.Thread.start()` fail ("can't start new thread"),
 * measured; under runsc the boundary is gVisor's own kernel and its filter
 * on the host's syscalls (see src/sandbox/README.md).
 */
export const RUNSC_RUNTIME_ARGS = ['--network=none'] as const;

const GVISOR_INSTALL_URL = 'https://gvisor.dev/docs/user_guide/install/';

export interface GvisorSetupOptions {
  docker: Docker;
  /** `DOCKER_HOST`, when set: a remote engine cannot be set up from here. */
  dockerHost: string | undefined;
  log: (line: string) => void;
  /** Default /etc/docker/daemon.json. */
  daemonConfigPath?: string;
  /** Default /var/run/docker.pid: the engine to reload. */
  daemonPidFile?: string;
  signal?: AbortSignal;
}

export type GvisorSetupOutcome =
  | { status: 'ready'; runtime: EngineRuntime; changed: string[] }
  | { status: 'manual'; reason: string; steps: string[] };

const daemonConfigSchema = z.record(z.string(), z.unknown());
const runtimesSchema = z.record(
  z.string(),
  z.looseObject({ path: z.string().optional(), runtimeArgs: z.array(z.string()).optional() }),
);

/** The daemon.json entry, for messages and the manual steps. */
export function runscDaemonEntry(runscPath: string): string {
  return JSON.stringify({ runtimes: { runsc: { path: runscPath, runtimeArgs: RUNSC_RUNTIME_ARGS } } });
}

function manualSteps(runscPath: string): string[] {
  return [
    `Install gVisor's runsc on the engine's machine (Debian/Ubuntu: \`apt-get install runsc\`; elsewhere ${GVISOR_INSTALL_URL}).`,
    `Merge into its /etc/docker/daemon.json: ${runscDaemonEntry(runscPath)}`,
    'Reload the engine: `sudo kill -HUP $(cat /var/run/docker.pid)` (or `sudo systemctl reload docker`); Docker Desktop: Settings → Docker Engine, then Apply.',
    'Check with `datalyst doctor` (Runtimes lists runsc), then run with --runtime runsc or DATALYST_RUNTIME=runsc.',
  ];
}

function hasNetworkNone(runtime: EngineRuntime): boolean {
  return RUNSC_RUNTIME_ARGS.every((arg) => runtime.args.includes(arg));
}

async function runscOf(docker: Docker): Promise<EngineRuntime | undefined> {
  return engineRuntimes(await docker.info()).find((runtime) => runtime.name === 'runsc');
}

async function executableOnPath(name: string): Promise<string | null> {
  const dirs = (process.env['PATH'] ?? '').split(path.delimiter).filter(Boolean);
  for (const dir of [...dirs, '/usr/bin', '/usr/local/bin', '/usr/sbin']) {
    const candidate = path.join(dir, name);
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

function isLocalEngine(dockerHost: string | undefined): boolean {
  return dockerHost === undefined || dockerHost.startsWith('unix://');
}

/** Installs Debian's runsc with apt; refreshes the package lists once if apt does not know it. */
async function aptInstallRunsc(log: (line: string) => void, signal?: AbortSignal): Promise<void> {
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () =>
    execa('apt-get', ['install', '-y', '-q', '--no-install-recommends', 'runsc'], {
      env,
      reject: false,
      ...(signal ? { cancelSignal: signal } : {}),
    });
  log('Installing runsc with apt-get…');
  let result = await install();
  if (result.exitCode !== 0) {
    log('apt-get does not have runsc yet; refreshing the package lists…');
    await execa('apt-get', ['update', '-q'], { env, ...(signal ? { cancelSignal: signal } : {}) });
    result = await install();
  }
  if (result.exitCode !== 0) {
    throw new SandboxUnavailableError(
      `apt-get could not install runsc: ${result.stderr.trim().slice(-500)}`,
      {
        fix: `Install gVisor by hand (${GVISOR_INSTALL_URL}), then run \`datalyst setup --gvisor\` again.`,
      },
    );
  }
}

/**
 * Adds (or completes) the `runsc` entry of daemon.json and keeps everything
 * else. Returns whether the file changed. The new file replaces the old one
 * in one rename, so the engine never reads half a file.
 */
export async function mergeRunscIntoDaemonConfig(configPath: string, runscPath: string): Promise<boolean> {
  let text: string | null = null;
  try {
    text = await readFile(configPath, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  let config: Record<string, unknown> = {};
  if (text !== null && text.trim() !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new ConfigError(
        `${configPath} is not valid JSON, so runsc was not added to it.`,
        `Fix the file (the engine cannot read it either), then run \`datalyst setup --gvisor\` again.`,
        error,
      );
    }
    const object = daemonConfigSchema.safeParse(parsed);
    if (!object.success) {
      throw new ConfigError(
        `${configPath} is not a JSON object, so runsc was not added to it.`,
        'Fix the file, then run `datalyst setup --gvisor` again.',
      );
    }
    config = object.data;
  }
  const runtimes = runtimesSchema.safeParse(config['runtimes'] ?? {});
  if (!runtimes.success) {
    throw new ConfigError(
      `The "runtimes" of ${configPath} are not in the shape Docker reads, so runsc was not added.`,
      'Fix the file, then run `datalyst setup --gvisor` again.',
    );
  }
  const existing = runtimes.data['runsc'];
  const args = [...(existing?.runtimeArgs ?? [])];
  for (const arg of RUNSC_RUNTIME_ARGS) if (!args.includes(arg)) args.push(arg);
  const entry = { ...existing, path: existing?.path ?? runscPath, runtimeArgs: args };
  if (JSON.stringify(existing) === JSON.stringify(entry)) return false;
  const merged = { ...config, runtimes: { ...runtimes.data, runsc: entry } };
  const mode = text === null ? 0o644 : (await stat(configPath)).mode & 0o777;
  const temporary = `${configPath}.datalyst-${process.pid}`;
  await writeFile(temporary, JSON.stringify(merged, null, 2) + '\n', { mode });
  await rename(temporary, configPath);
  return true;
}

/** Sends SIGHUP to the engine and waits (at most 15 s) until /info lists runsc with its arguments. */
async function reloadEngine(docker: Docker, pidFile: string): Promise<EngineRuntime> {
  const pid = Number((await readFile(pidFile, 'utf8')).trim());
  if (!Number.isInteger(pid) || pid <= 1) {
    throw new SandboxUnavailableError(`${pidFile} does not hold the engine's process id.`, {
      fix: 'Reload the engine yourself (`sudo systemctl reload docker`), then check with `datalyst doctor`.',
    });
  }
  process.kill(pid, 'SIGHUP');
  for (let attempt = 0; attempt < 150; attempt++) {
    const runsc = await runscOf(docker);
    if (runsc !== undefined && hasNetworkNone(runsc)) return runsc;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new SandboxUnavailableError('The engine was reloaded but does not list runsc.', {
    fix: "Read the engine's log: a reload is refused when daemon.json conflicts with dockerd's command-line flags.",
  });
}

export async function setUpGvisor(options: GvisorSetupOptions): Promise<GvisorSetupOutcome> {
  const { docker, log } = options;
  const configPath = options.daemonConfigPath ?? '/etc/docker/daemon.json';
  const registered = await runscOf(docker);
  if (registered !== undefined && hasNetworkNone(registered)) {
    return { status: 'ready', runtime: registered, changed: [] };
  }
  if (!isLocalEngine(options.dockerHost)) {
    return {
      status: 'manual',
      reason: `the engine at DOCKER_HOST=${options.dockerHost} is on another machine; set it up there`,
      steps: manualSteps(registered?.path ?? '/usr/bin/runsc'),
    };
  }
  const changed: string[] = [];
  let runscPath = registered?.path ?? (await executableOnPath('runsc'));
  if (runscPath === null) {
    const canApt =
      process.getuid?.() === 0 &&
      (await exists('/etc/debian_version')) &&
      (await executableOnPath('apt-get'));
    if (!canApt) {
      return {
        status: 'manual',
        reason: 'runsc is not installed, and this is not Debian/Ubuntu as root (apt-get)',
        steps: manualSteps('/usr/bin/runsc'),
      };
    }
    await aptInstallRunsc(log, options.signal);
    runscPath = await executableOnPath('runsc');
    if (runscPath === null) {
      throw new SandboxUnavailableError('apt-get installed runsc, but no runsc binary was found.', {
        fix: `Install gVisor by hand (${GVISOR_INSTALL_URL}).`,
      });
    }
    changed.push(`installed ${runscPath} (Debian package runsc)`);
  }
  try {
    await access(path.dirname(configPath), constants.W_OK);
  } catch {
    return {
      status: 'manual',
      reason: `${configPath} cannot be written by this user`,
      steps: manualSteps(runscPath).slice(1),
    };
  }
  if (await mergeRunscIntoDaemonConfig(configPath, runscPath)) {
    changed.push(`registered runsc in ${configPath} (runtimeArgs ${RUNSC_RUNTIME_ARGS.join(' ')})`);
  }
  log('Reloading the Docker engine (SIGHUP; running containers are kept)…');
  const runtime = await reloadEngine(docker, options.daemonPidFile ?? '/var/run/docker.pid');
  changed.push('reloaded the engine');
  return { status: 'ready', runtime, changed };
}
