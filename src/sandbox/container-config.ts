import { hostname } from 'node:os';
import { containerLabels, processStartedMs } from './container-labels.ts';
import type { SandboxLimits } from './sandbox.ts';
import { defaultSandboxLimits } from './sandbox-limits.ts';
import { seccompSecurityOption } from './seccomp-profile.ts';

/** Where the kernel lives and works inside the runner image. */
export const containerPaths = {
  supervisor: '/opt/datalyst/supervisor.py',
  workdir: '/home/analyst/work',
  scratch: '/tmp',
} as const;

/** The image's non-root user (docker/python-runner/Dockerfile creates it). */
export const containerUser = '1000:1000';

const MIB = 1024 * 1024;

export interface ContainerConfigInput {
  sessionId: string;
  image: string;
  limits: SandboxLimits;
  /** Epoch ms of creation; the deadline label is this plus `sessionTimeoutMs`. */
  nowMs: number;
  ownerPid?: number;
  ownerHost?: string;
  /** Epoch ms when the owner started; default this process's start. */
  ownerStartedMs?: number;
}

/**
 * The body of `POST /containers/create` for one session: every limit of the
 * design, stdin kept open for the JSON-lines protocol, no network, no log file.
 */
export function containerCreateBody(input: ContainerConfigInput): Record<string, unknown> {
  const { limits } = input;
  const memoryBytes = Math.round(limits.memoryMb * MIB);
  return {
    Image: input.image,
    Cmd: ['python3', '-u', containerPaths.supervisor, '--workdir', containerPaths.workdir],
    User: containerUser,
    WorkingDir: containerPaths.workdir,
    Env: ['TMPDIR=/tmp', 'XDG_CACHE_HOME=/tmp/cache', 'PYTHONUNBUFFERED=1'],
    Labels: {
      [containerLabels.session]: input.sessionId,
      [containerLabels.ownerPid]: String(input.ownerPid ?? process.pid),
      [containerLabels.ownerHost]: input.ownerHost ?? hostname(),
      [containerLabels.ownerStarted]: String(input.ownerStartedMs ?? processStartedMs()),
      [containerLabels.deadline]: String(
        input.nowMs + (limits.sessionTimeoutMs ?? defaultSandboxLimits.sessionTimeoutMs),
      ),
    },
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
      NetworkMode: 'none',
      CapDrop: ['ALL'],
      // Our own seccomp allowlist replaces Docker's default (see seccomp-profile.ts).
      SecurityOpt: ['no-new-privileges', seccompOption()],
      ReadonlyRootfs: true,
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
        // RLIMIT_NPROC counts every process of uid 1000 on the host (other sessions
        // too), so it is only a backstop; the pids cgroup above is the real limit.
        { Name: 'nproc', Soft: processBackstop(limits), Hard: processBackstop(limits) },
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

function processBackstop(limits: SandboxLimits): number {
  return Math.max(1024, Math.round(limits.pidsLimit) * 4);
}
