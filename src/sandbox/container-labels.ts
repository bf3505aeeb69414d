/**
 * Labels on every session container. A reaper finds containers whose owner
 * process is gone or whose deadline has passed with these names alone.
 */
export const containerLabels = {
  /** The session id (also in the container name, `datalyst-<session>`). */
  session: 'org.datalyst.session',
  /** PID of the process that created the session. */
  ownerPid: 'org.datalyst.owner-pid',
  /** os.hostname() of that process (a PID means nothing on another machine). */
  ownerHost: 'org.datalyst.owner-host',
  /** Epoch milliseconds when that process started: tells the owner from a later process with its PID. */
  ownerStarted: 'org.datalyst.owner-started',
  /** Epoch milliseconds after which the container may be removed whatever its owner does. */
  deadline: 'org.datalyst.deadline',
} as const;

export type ContainerLabelName = (typeof containerLabels)[keyof typeof containerLabels];

/** Epoch ms at which this process started (the owner-started label). */
export function processStartedMs(): number {
  return Math.round(Date.now() - process.uptime() * 1000);
}
