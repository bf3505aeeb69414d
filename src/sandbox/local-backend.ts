import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { CancelledError, SandboxUnavailableError } from '../errors/index.ts';
import type { KernelProcess, KernelStartRequest, SandboxBackend } from './kernel-process.ts';
import { runnerImageDir } from './runner-image.ts';
import type { SandboxLimits } from './sandbox.ts';

/**
 * The `local` backend: the same kernel supervisor as in the image, run as a
 * plain process of the current user, for machines without Docker.
 *
 * NOTHING IS ISOLATED. The code a model writes runs with the user's rights: it
 * can read and change their files, reach the network and start programs.
 * What this backend can still do: its own working directory (a fresh folder in
 * the temp directory, removed on close), an environment without the host's
 * variables (no API keys leak into cells), the cell timeout and output caps of
 * the supervisor, and rlimits set before the supervisor starts: address space
 * (memoryMb: an oversized allocation is a MemoryError, not an OOM kill), file
 * size, open files, no core dumps, and a lower CPU priority.
 */

export interface LocalBackendOptions {
  /**
   * A Python 3 with pandas. Default `DATALYST_PYTHON`, else the first of
   * `python3` on PATH and `/usr/bin/python3` that imports pandas and matplotlib.
   */
  python?: string;
  /** Folder in which each session gets its own folder. Default the OS temp directory. */
  rootDir?: string;
  /** Receives the no-isolation warning at every start. Default: written to stderr. */
  warn?: (message: string) => void;
}

export const LOCAL_BACKEND_WARNING = [
  '',
  '!!! DATALYST LOCAL SANDBOX: NOTHING IS ISOLATED !!!',
  'The code the model writes runs as YOUR user on THIS machine: it can read and change your files,',
  'use the network and start programs. Only a timeout, output caps and a few resource limits apply.',
  'Use the Docker sandbox (the default) unless you trust every cell that will run.',
  '',
].join('\n');

const kernelDir = join(runnerImageDir, 'kernel');
const PYTHON_CHECK_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 2_000;

// Runs in the chosen Python before the supervisor: sets the limits, lowers the
// priority, then becomes the supervisor (exec, so signals and exit status are its).
const launcher = `
import json, os, resource, sys
limits = json.loads(sys.argv[1])
for name, value in limits.items():
    kind = getattr(resource, name)
    soft, hard = resource.getrlimit(kind)
    value = value if hard == resource.RLIM_INFINITY else min(value, hard)
    resource.setrlimit(kind, (value, value))
try:
    os.nice(5)
except OSError:
    pass
os.execv(sys.executable, [sys.executable, '-u'] + sys.argv[2:])
`;

function rlimitsOf(limits: SandboxLimits): Record<string, number> {
  return {
    RLIMIT_AS: Math.round(limits.memoryMb * 1024 * 1024),
    RLIMIT_FSIZE: Math.round(limits.maxFileBytes),
    RLIMIT_NOFILE: Math.round(limits.maxOpenFiles),
    RLIMIT_CORE: 0,
  };
}

async function canRunKernel(python: string): Promise<boolean> {
  const check = await execa(python, ['-c', 'import pandas, matplotlib, numpy'], {
    reject: false,
    timeout: PYTHON_CHECK_TIMEOUT_MS,
    extendEnv: false,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
  });
  return check.exitCode === 0;
}

async function findPython(explicit: string | undefined): Promise<string> {
  const candidates = explicit ? [explicit] : ['python3', '/usr/bin/python3'];
  for (const candidate of candidates) {
    if (await canRunKernel(candidate)) return candidate;
  }
  throw new SandboxUnavailableError(
    `No Python with pandas and matplotlib was found for the local sandbox (tried ${candidates.join(', ')}).`,
    {
      fix: explicit
        ? `Install pandas and matplotlib for ${explicit}, or point DATALYST_PYTHON at a Python that has them.`
        : 'Install them (Debian/Ubuntu: apt-get install python3-pandas python3-matplotlib python3-openpyxl) or set DATALYST_PYTHON; or use the Docker sandbox.',
      fault: 'user',
    },
  );
}

/** The environment of the kernel: only what Python and the plotting stack need, none of the host's secrets. */
function kernelEnvironment(sessionDir: string, workdir: string): Record<string, string> {
  const scratch = join(sessionDir, 'tmp');
  return {
    PATH: process.env['PATH'] ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: sessionDir,
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    TMPDIR: scratch,
    XDG_CACHE_HOME: join(scratch, 'cache'),
    MPLCONFIGDIR: join(scratch, 'matplotlib'),
    MPLBACKEND: 'Agg',
    PYTHONUNBUFFERED: '1',
    PYTHONDONTWRITEBYTECODE: '1',
    PYTHONNOUSERSITE: '1',
    OPENBLAS_NUM_THREADS: '1',
    OMP_NUM_THREADS: '1',
    DATALYST_WORKDIR: workdir,
  };
}

export function createLocalBackend(options: LocalBackendOptions = {}): SandboxBackend {
  let python: Promise<string> | undefined;
  const warn = options.warn ?? ((message: string) => process.stderr.write(message + '\n'));
  return {
    name: 'local',
    async start(request: KernelStartRequest): Promise<KernelProcess> {
      const { signal } = request;
      warn(LOCAL_BACKEND_WARNING);
      python ??= findPython(options.python ?? process.env['DATALYST_PYTHON']);
      const executable = await python.catch((error: unknown) => {
        python = undefined; // installed meanwhile? the next start looks again
        throw error;
      });
      if (signal?.aborted) throw new CancelledError(signal.reason);
      const sessionDir = await mkdtemp(
        join(options.rootDir ?? tmpdir(), `datalyst-local-${request.sessionId}-`),
      );
      const workdir = join(sessionDir, 'work');
      await mkdir(workdir);
      await mkdir(join(sessionDir, 'tmp'));
      const child = execa(
        executable,
        [
          '-c',
          launcher,
          JSON.stringify(rlimitsOf(request.limits)),
          join(kernelDir, 'supervisor.py'),
          '--workdir',
          workdir,
        ],
        {
          cwd: workdir,
          extendEnv: false,
          env: kernelEnvironment(sessionDir, workdir),
          stdin: 'pipe',
          stdout: 'pipe',
          stderr: 'pipe',
          buffer: false,
          reject: false,
          // Its own process group: a Ctrl-C in the terminal is the host's to handle.
          detached: true,
        },
      );
      const { stdin, stdout, stderr, pid } = child;
      if (!stdin || !stdout || !stderr || pid === undefined) {
        child.kill('SIGKILL');
        await rm(sessionDir, { recursive: true, force: true });
        throw new SandboxUnavailableError(`The local kernel could not be started with ${executable}.`, {
          fix: 'Check that the Python can run, or use the Docker sandbox.',
        });
      }
      let disposal: Promise<void> | undefined;
      const dispose = (): Promise<void> => {
        disposal ??= (async () => {
          // Closing stdin is the supervisor's signal to stop its worker and exit.
          stdin.end();
          const exited = await Promise.race([
            child.then(() => true),
            new Promise<boolean>((resolve) => setTimeout(() => resolve(false), STOP_GRACE_MS).unref()),
          ]);
          if (!exited) {
            try {
              process.kill(-pid, 'SIGKILL');
            } catch {
              child.kill('SIGKILL');
            }
            await child;
          }
          await rm(sessionDir, { recursive: true, force: true });
        })();
        return disposal;
      };
      if (signal?.aborted) {
        await dispose();
        throw new CancelledError(signal.reason);
      }
      return { stdin, stdout, stderr, description: `local process ${pid}`, dispose };
    },
  };
}
