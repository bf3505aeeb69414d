import type { SandboxFactory } from '../agent/index.ts';
import {
  createSandbox,
  createWarmPool,
  readSandboxEnvironment,
  type SandboxOptions,
  type SandboxSession,
  type WarmPool,
} from '../sandbox/index.ts';
import type { DeepAnalyzeOptions } from './deep-options.ts';

/**
 * Where the sessions of a deep run come from: the caller's `createSandbox`,
 * else a warm pool (the caller's, or the run's own on the Docker backend, its
 * kernels started while the brief is written). The sessions that profiled the
 * workspace are handed to the first sub-analyses rather than thrown away.
 */
export class SessionSource {
  private pool: WarmPool | null;
  private readonly ownsPool: boolean;
  private readonly poolSize: number;
  private poolClosing: Promise<void> | null = null;
  /** Sessions that profiled the workspace, kept for the first sub-analyses. */
  private handover: SandboxSession[] = [];
  private handedOut = 0;
  private closeAfter: number | null = null;

  constructor(
    private readonly options: Pick<
      DeepAnalyzeOptions,
      'createSandbox' | 'sandbox' | 'warmPool' | 'workspaceDir'
    >,
    poolSize: number,
  ) {
    const backend = options.sandbox?.backend ?? readSandboxEnvironment().backend ?? 'docker';
    const ownPool =
      options.warmPool === undefined && options.createSandbox === undefined && backend === 'docker';
    this.ownsPool = ownPool;
    this.poolSize = poolSize;
    this.pool = options.warmPool ?? null;
  }

  /** Starts the run's own pool, when it has one (its first kernel starts at once): once the run folder is claimed. */
  warmUp(): void {
    if (!this.ownsPool || this.pool !== null || this.poolClosing !== null) return;
    const { sandbox } = this.options;
    this.pool = createWarmPool({
      size: this.poolSize,
      ...(sandbox?.image === undefined ? {} : { image: sandbox.image }),
      ...(sandbox?.runtime === undefined ? {} : { runtime: sandbox.runtime }),
      ...(sandbox?.limits === undefined ? {} : { limits: sandbox.limits }),
    });
  }

  /** `count` sessions for profiling the workspace (a part each); kept for the first sub-analyses. */
  async first(count: number, signal: AbortSignal): Promise<SandboxSession[]> {
    const opened = await Promise.allSettled(
      Array.from({ length: count }, () =>
        this.open({ ...this.options.sandbox, workspaceDir: this.options.workspaceDir, signal }),
      ),
    );
    const sessions = opened.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    // Kept before a failure is thrown: close() then closes the ones that did open.
    this.handover.push(...sessions);
    const failed = opened.find((result) => result.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    return sessions;
  }

  /** What each sub-analysis's thread opens its session with. */
  readonly factory: SandboxFactory = async (sandboxOptions) => {
    const session = this.handover.shift() ?? (await this.open(sandboxOptions));
    this.handedOut += 1;
    if (this.closeAfter !== null && this.handedOut >= this.closeAfter) void this.closePool();
    return session;
  };

  /** No session past the `total`-th will be asked for: the run's own pool stops starting kernels once it is handed out. */
  closePoolAfter(total: number): void {
    this.closeAfter = total;
    if (this.handedOut >= total) void this.closePool();
  }

  /** Closes the run's own pool once; every caller waits for that one close (its in-flight start included). */
  private closePool(): Promise<void> {
    if (!this.ownsPool || this.pool === null) return Promise.resolve();
    this.poolClosing ??= this.pool.close();
    return this.poolClosing;
  }

  /** Closes the kept sessions nobody took, and the run's own pool. */
  async close(): Promise<void> {
    const kept = this.handover.splice(0);
    await Promise.allSettled([...kept.map((session) => session.close()), this.closePool()]);
  }

  private open(sandboxOptions: SandboxOptions): Promise<SandboxSession> {
    if (this.pool !== null && this.poolClosing === null) {
      return this.pool.acquire({
        ...(sandboxOptions.workspaceDir === undefined ? {} : { workspaceDir: sandboxOptions.workspaceDir }),
        // The run folder (and the caller's folders) left out, as createSandbox leaves them out: a pool lists too.
        ...(sandboxOptions.excludeDirs === undefined ? {} : { excludeDirs: sandboxOptions.excludeDirs }),
        ...(sandboxOptions.signal === undefined ? {} : { signal: sandboxOptions.signal }),
      });
    }
    return (this.options.createSandbox ?? createSandbox)(sandboxOptions);
  }
}
