import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import Docker from 'dockerode';
import { z } from 'zod';
import { containerLabels } from './container-labels.ts';
import { dockerStatusCode } from './docker-errors.ts';

/**
 * Removes session containers nobody will ever close: those whose owner
 * process is gone (on this host) and those whose deadline has passed (on any
 * host: a PID means nothing on another machine). A session container normally
 * removes itself (AutoRemove when its stdin closes with the owner), but not
 * when the owner died between create and start, when the engine lost the
 * attach connection's end, or when an older Datalyst left it behind.
 */

export type ReapReason = 'owner-gone' | 'deadline-passed';

export interface ReapedContainer {
  containerId: string;
  sessionId: string;
  reason: ReapReason;
}

export interface ReapReport {
  removed: ReapedContainer[];
  /** Session containers left alone (live owner, deadline ahead, or another host's). */
  kept: number;
  failed: { containerId: string; error: unknown }[];
  /** Inputs volumes (`datalyst-inputs-…`) removed because their session is gone. */
  removedVolumes: string[];
}

export interface ReapOptions {
  /** Default `new Docker()` (DOCKER_HOST or the local socket). */
  docker?: Docker;
  /** Default `Date.now()`. */
  nowMs?: number;
  /** This machine as the owner-host label spells it; default `os.hostname()`. */
  hostName?: string;
  /** Default: signal 0 to the PID, and its start time where /proc tells it. */
  isOwnerAlive?: (owner: { pid: number; startedMs: number | undefined }) => boolean;
  signal?: AbortSignal;
}

const labelsSchema = z.object({
  [containerLabels.session]: z.string().min(1),
  [containerLabels.ownerPid]: z.coerce.number().int().positive().optional().catch(undefined),
  [containerLabels.ownerHost]: z.string().optional(),
  [containerLabels.deadline]: z.coerce.number().int().nonnegative().optional().catch(undefined),
  [containerLabels.ownerStarted]: z.coerce.number().nonnegative().optional().catch(undefined),
});

/** Why a container should go, or null to keep it. Exported for tests. */
export function reapReason(
  labels: Record<string, string>,
  context: {
    nowMs: number;
    hostName: string;
    isOwnerAlive: NonNullable<ReapOptions['isOwnerAlive']>;
  },
): ReapReason | null {
  const parsed = labelsSchema.safeParse(labels);
  if (!parsed.success) return null;
  const deadline = parsed.data[containerLabels.deadline];
  if (deadline !== undefined && deadline <= context.nowMs) return 'deadline-passed';
  const pid = parsed.data[containerLabels.ownerPid];
  if (pid === undefined || parsed.data[containerLabels.ownerHost] !== context.hostName) return null;
  return context.isOwnerAlive({ pid, startedMs: parsed.data[containerLabels.ownerStarted] })
    ? null
    : 'owner-gone';
}

// Start times from /proc are in clock ticks since boot; Linux reports them in
// USER_HZ, which is 100 on every architecture Node runs on.
const USER_HZ = 100;
/** Two processes with the same PID started this far apart are not the same process. */
const START_TOLERANCE_MS = 5_000;

let bootTimeMs: number | null | undefined;

function linuxBootTimeMs(): number | null {
  if (bootTimeMs !== undefined) return bootTimeMs;
  try {
    const line = readFileSync('/proc/stat', 'utf8')
      .split('\n')
      .find((entry) => entry.startsWith('btime '));
    bootTimeMs = line ? Number(line.slice(6)) * 1000 : null;
  } catch {
    bootTimeMs = null;
  }
  return bootTimeMs;
}

/** Start time of a live process in epoch ms, or undefined where /proc cannot tell. */
function linuxProcessStartedMs(pid: number): number | undefined {
  const boot = linuxBootTimeMs();
  if (boot === null) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses: fields restart after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[19]);
    return Number.isFinite(ticks) ? boot + (ticks * 1000) / USER_HZ : undefined;
  } catch {
    return undefined;
  }
}

/** The default liveness check: the PID exists and, where known, started when the label says. */
export function isOwnerProcessAlive(owner: { pid: number; startedMs: number | undefined }): boolean {
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    // EPERM: it exists but belongs to another user.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (owner.startedMs === undefined) return true;
  const actual = linuxProcessStartedMs(owner.pid);
  return actual === undefined || Math.abs(actual - owner.startedMs) <= START_TOLERANCE_MS;
}

/** One pass: lists the session containers and removes the orphans. */
export async function reapOrphanedContainers(options: ReapOptions = {}): Promise<ReapReport> {
  const docker = options.docker ?? new Docker();
  const context = {
    nowMs: options.nowMs ?? Date.now(),
    hostName: options.hostName ?? hostname(),
    isOwnerAlive: options.isOwnerAlive ?? isOwnerProcessAlive,
  };
  const containers = await docker.listContainers({
    all: true,
    filters: { label: [containerLabels.session] },
    ...(options.signal ? { abortSignal: options.signal } : {}),
  });
  const report: ReapReport = { removed: [], kept: 0, failed: [], removedVolumes: [] };
  await Promise.all(
    containers.map(async (container) => {
      const labels = container.Labels ?? {};
      const reason = reapReason(labels, context);
      if (reason === null) {
        report.kept += 1;
        return;
      }
      try {
        await docker.getContainer(container.Id).remove({
          force: true,
          ...(options.signal ? { abortSignal: options.signal } : {}),
        });
      } catch (error) {
        // 404: gone already; 409: removal in progress (AutoRemove or another reaper).
        const status = dockerStatusCode(error);
        if (status !== 404 && status !== 409) {
          report.failed.push({ containerId: container.Id, error });
          return;
        }
      }
      report.removed.push({
        containerId: container.Id,
        sessionId: labels[containerLabels.session] ?? '',
        reason,
      });
    }),
  );
  report.removedVolumes = await reapOrphanedVolumes(docker, context, options.signal);
  return report;
}

/**
 * Inputs volumes carry the labels of their session. One whose owner is gone
 * (or deadline passed) goes once no container uses it: the engine refuses to
 * remove a volume in use (409), so a live session's volume is never touched.
 */
async function reapOrphanedVolumes(
  docker: Docker,
  context: Parameters<typeof reapReason>[1],
  signal: AbortSignal | undefined,
): Promise<string[]> {
  const listed = z
    .object({
      Volumes: z
        .array(z.object({ Name: z.string(), Labels: z.record(z.string(), z.string()).nullish() }))
        .nullish(),
    })
    .parse(
      await docker.listVolumes({
        filters: { label: [containerLabels.session] },
        ...(signal ? { abortSignal: signal } : {}),
      }),
    );
  const removed: string[] = [];
  await Promise.all(
    (listed.Volumes ?? []).map(async (volume) => {
      if (reapReason(volume.Labels ?? {}, context) === null) return;
      try {
        await docker.getVolume(volume.Name).remove(signal ? { abortSignal: signal } : {});
        removed.push(volume.Name);
      } catch {
        // 409: still in use (its container goes first, at this pass or the next); 404: gone.
      }
    }),
  );
  return removed;
}

export interface PeriodicReaperOptions extends Omit<ReapOptions, 'nowMs' | 'signal'> {
  /** Time between passes. Default 5 minutes. */
  intervalMs?: number;
  /** Called with each pass's failure (engine unreachable…); default: ignored. */
  onError?: (error: unknown) => void;
  onReport?: (report: ReapReport) => void;
}

export interface PeriodicReaper {
  /** The pass that runs at once: its report, or undefined when it failed. */
  readonly firstPass: Promise<ReapReport | undefined>;
  stop(): void;
}

/** Runs a pass now and then every `intervalMs`; the timer never keeps the process alive. */
export function startPeriodicReaper(options: PeriodicReaperOptions = {}): PeriodicReaper {
  const controller = new AbortController();
  const pass = async (): Promise<ReapReport | undefined> => {
    try {
      const report = await reapOrphanedContainers({ ...options, signal: controller.signal });
      options.onReport?.(report);
      return report;
    } catch (error) {
      if (!controller.signal.aborted) options.onError?.(error);
      return undefined;
    }
  };
  const firstPass = pass();
  let running: Promise<unknown> = firstPass;
  const timer = setInterval(
    () => {
      running = running.then(pass);
    },
    options.intervalMs ?? 5 * 60_000,
  );
  timer.unref();
  return {
    firstPass,
    stop() {
      clearInterval(timer);
      controller.abort();
    },
  };
}

const reapersByEngine = new WeakMap<Docker, PeriodicReaper>();
let defaultEngineReaper: PeriodicReaper | undefined;

/**
 * Starts the periodic reaper for an engine once per process (the docker
 * backend calls this when it starts a session). Never throws, never waits.
 */
export function ensureReaperRunning(docker?: Docker): PeriodicReaper {
  if (docker === undefined) {
    defaultEngineReaper ??= startPeriodicReaper();
    return defaultEngineReaper;
  }
  let reaper = reapersByEngine.get(docker);
  if (!reaper) {
    reaper = startPeriodicReaper({ docker });
    reapersByEngine.set(docker, reaper);
  }
  return reaper;
}
