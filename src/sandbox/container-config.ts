import { hostname } from 'node:os';
import { containerLabels, processStartedMs } from './container-labels.ts';
import type { SandboxLimits, SandboxRuntimeName } from './sandbox.ts';
import { defaultSandboxLimits } from './sandbox-limits.ts';
import { seccompSecurityOption } from './seccomp-profile.ts';

/** Where the kernel lives and works inside the runner image. */
export const containerPaths = {
  supervisor: '/opt/datalyst/supervisor.py',
  workdir: '/home/analyst/work',
  scratch: '/tmp',
  /** The workspace, read-only, outside the working directory (the kernel links its files into it). */
  inputs: '/mnt/inputs',
} as const;

/** The image's non-root user (docker/python-runner/Dockerfile creates it). */
export const containerUser = '1000:1000';

const MIB = 1024 * 1024;

/**
 * Under gVisor the host's OOM killer sees the sandbox's own kernel (the
 * Sentry), not the worker: past the memory limit it kills the whole
 * container, and the session with it (measured: exit 137, every later cell
 * failed). So under runsc every process also gets an address-space limit
 * (RLIMIT_AS, which gVisor enforces; Docker's --ulimit has no `as`, hence
 * prlimit) below the cgroup's limit: a memory bomb then ends in the cell's
 * `MemoryError`, the variables kept, and the session lives on. The rest of
 * the limit is for the Sentry, the supervisor and the tmpfs files.
 */
export const RUNSC_ADDRESS_SPACE_SHARE = 0.8;

/** The address-space limit of every process of a runsc session, in bytes. */
export function runscAddressSpaceBytes(limits: SandboxLimits): number {
  return Math.round(limits.memoryMb * MIB * RUNSC_ADDRESS_SPACE_SHARE);
}

export interface ContainerConfigInput {
  sessionId: string;
  image: string;
  limits: SandboxLimits;
  /** OCI runtime (HostConfig.Runtime). Default `runc`. */
  runtime?: SandboxRuntimeName;
  /** Epoch ms of creation; the deadline label is this plus `sessionTimeoutMs`. */
  nowMs: number;
  ownerPid?: number;
  ownerHost?: string;
  /** Epoch ms when the owner started; default this process's start. */
  ownerStartedMs?: number;
  /** The workspace's read-only mount: the host folder (`bind`, local engines) or a volume. */
  inputs?: BindInputs | { type: 'volume'; volume: string };
}

/**
 * The host folder, bound read-only; `hidden` are its folders (relative,
 * `/`-separated, none inside another) covered by an empty read-only tmpfs
 * each: folders left out of the workspace (a run folder inside it) that the
 * bind would otherwise show under /mnt/inputs.
 */
export interface BindInputs {
  type: 'bind';
  source: string;
  hidden?: readonly string[];
}

/** The labels a reaper reads: the session, its owner and a deadline (containers and volumes alike). */
export function sessionLabels(input: ContainerConfigInput): Record<string, string> {
  return {
    [containerLabels.session]: input.sessionId,
    [containerLabels.ownerPid]: String(input.ownerPid ?? process.pid),
    [containerLabels.ownerHost]: input.ownerHost ?? hostname(),
    [containerLabels.ownerStarted]: String(input.ownerStartedMs ?? processStartedMs()),
    [containerLabels.deadline]: String(
      input.nowMs + (input.limits.sessionTimeoutMs ?? defaultSandboxLimits.sessionTimeoutMs),
    ),
  };
}

/** The read-only mount of the workspace, in the Engine API's `Mounts` form. */
function inputsMount(inputs: NonNullable<ContainerConfigInput['inputs']>): Record<string, unknown> {
  return inputs.type === 'bind'
    ? {
        Type: 'bind',
        Source: inputs.source,
        Target: containerPaths.inputs,
        ReadOnly: true,
        BindOptions: { Propagation: 'rprivate' },
      }
    : {
        Type: 'volume',
        Source: inputs.volume,
        Target: containerPaths.inputs,
        ReadOnly: true,
        VolumeOptions: { NoCopy: true },
      };
}

/** An empty, read-only tmpfs over a folder of the bound workspace, so that the kernel cannot read what is in it. */
function hidingMount(folder: string): Record<string, unknown> {
  return {
    Type: 'tmpfs',
    Target: `${containerPaths.inputs}/${folder}`,
    ReadOnly: true,
    TmpfsOptions: { SizeBytes: 4096, Mode: 0o555 },
  };
}

/**
 * The body of `POST /containers/create` for one session: every limit of the
 * design, stdin kept open for the JSON-lines protocol, no network, no log file.
 */
export function containerCreateBody(input: ContainerConfigInput): Record<string, unknown> {
  const { limits } = input;
  const memoryBytes = Math.round(limits.memoryMb * MIB);
  const runtime = input.runtime ?? 'runc';
  const supervisor = ['python3', '-u', containerPaths.supervisor, '--workdir', containerPaths.workdir];
  return {
    Image: input.image,
    Cmd:
      runtime === 'runsc'
        ? ['prlimit', `--as=${runscAddressSpaceBytes(limits)}`, '--', ...supervisor]
        : supervisor,
    User: containerUser,
    WorkingDir: containerPaths.workdir,
    Env: [
      'TMPDIR=/tmp',
      'XDG_CACHE_HOME=/tmp/cache',
      'PYTHONUNBUFFERED=1',
      ...(input.inputs ? [`DATALYST_INPUTS_ROOT=${containerPaths.inputs}`] : []),
    ],
    Labels: sessionLabels(input),
    // The protocol runs over the attached stdio. StdinOnce: when the host goes
    // away, stdin closes, the supervisor exits and AutoRemove deletes the container.
    AttachStdin: true,
    AttachStdout: true,
    AttachStderr: true,
    OpenStdin: true,
    StdinOnce: true,
    Tty: false,
    // The supervisor ignores SIGTERM (a cell could send it through init); a stop
    // (docker stop, an engine shutting down) has nothing to flush: kill at once.
    StopSignal: 'SIGKILL',
    NetworkDisabled: true,
    HostConfig: {
      // Named, not left to the engine's default, so that the trace records what ran.
      Runtime: runtime,
      NetworkMode: 'none',
      CapDrop: ['ALL'],
      // Our own seccomp allowlist replaces Docker's default (see seccomp-profile.ts).
      SecurityOpt: ['no-new-privileges', seccompOption()],
      ReadonlyRootfs: true,
      // Read-only and outside the memory cgroup's tmpfs: inputs of any size cost no sandbox memory.
      ...(input.inputs
        ? {
            Mounts: [
              inputsMount(input.inputs),
              ...(input.inputs.type === 'bind' ? (input.inputs.hidden ?? []).map(hidingMount) : []),
            ],
          }
        : {}),
      Tmpfs: {
        [containerPaths.workdir]: `rw,nosuid,nodev,size=${Math.round(limits.workdirMb)}m,nr_inodes=${tmpfsInodes(limits.workdirMb)},uid=1000,gid=1000,mode=0755`,
        [containerPaths.scratch]: `rw,noexec,nosuid,nodev,size=${Math.round(limits.scratchMb)}m,nr_inodes=${tmpfsInodes(limits.scratchMb)},mode=1777`,
      },
      // Memory equal to memory+swap: no swap, so a memory bomb ends in an OOM kill, not thrashing.
      Memory: memoryBytes,
      MemorySwap: memoryBytes,
      NanoCpus: Math.round(limits.cpus * 1e9),
      PidsLimit: Math.round(limits.pidsLimit),
      Ulimits: [
        { Name: 'nofile', Soft: Math.round(limits.maxOpenFiles), Hard: Math.round(limits.maxOpenFiles) },
        { Name: 'fsize', Soft: Math.round(limits.maxFileBytes), Hard: Math.round(limits.maxFileBytes) },
        { Name: 'core', Soft: 0, Hard: 0 },
        // Under runc, RLIMIT_NPROC counts every process of uid 1000 on the host (other
        // sessions too), so it is only a backstop; the pids cgroup above is the real
        // limit. Under runsc the pids cgroup sees the Sentry's threads, not the cell's
        // tasks, while gVisor counts RLIMIT_NPROC in its own kernel, for this
        // sandbox alone: there it is the real limit.
        {
          Name: 'nproc',
          Soft: processLimitOf(limits, runtime),
          Hard: processLimitOf(limits, runtime),
        },
      ],
      // No docker-init: the supervisor is PID 1 (see the README's "The host channel").
      // docker-init ran as the cell's uid and was dumpable, so a cell could write
      // forged protocol lines to /proc/1/fd/1.
      Init: false,
      // No json log file on the host: a stdout flood must not fill its disk.
      LogConfig: { Type: 'none', Config: {} },
      AutoRemove: true,
      IpcMode: 'private',
    },
  };
}

let cachedSeccompOption: string | undefined;
function seccompOption(): string {
  cachedSeccompOption ??= seccompSecurityOption();
  return cachedSeccompOption;
}

/**
 * Inodes of a tmpfs of `sizeMb`: one per 4 KiB page of its size (as many files
 * as fit when each holds a page), at least 4 096. Without a cap a tmpfs allows
 * one inode per page of the host's RAM, and millions of empty files (which take
 * no size) fill the container's memory with inodes and wedge the session; at
 * the cap, creating a file fails with ENOSPC, an error of that cell only.
 */
export function tmpfsInodes(sizeMb: number): number {
  return Math.max(MIN_TMPFS_INODES, Math.round(sizeMb * TMPFS_INODES_PER_MB));
}
const TMPFS_INODES_PER_MB = 256;
const MIN_TMPFS_INODES = 4_096;

function processLimitOf(limits: SandboxLimits, runtime: SandboxRuntimeName): number {
  return runtime === 'runsc'
    ? Math.round(limits.pidsLimit)
    : Math.max(1024, Math.round(limits.pidsLimit) * 4);
}
