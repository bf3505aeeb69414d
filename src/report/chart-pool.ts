import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { DEFAULT_MAX_CHART_ROWS, failedChart } from './rendered-chart.ts';
import type { RenderedChart } from './rendered-chart.ts';
import { chartWorkerMessageSchema } from './chart-worker-protocol.ts';
import { unlessAborted } from '../util/unless-aborted.ts';
import type { ChartJob } from './chart-worker-protocol.ts';

/**
 * Draws chart specs in worker processes. Two reasons, both about the specs
 * coming from an untrusted kernel: a spec can ask vega for far more work than
 * its data suggests (a `sequence` of 10⁸ rows exhausts the heap and would take
 * the whole process down; a slow one would hang the report), so each worker
 * has a heap limit and each chart a time limit, and a chart that breaks
 * either is stopped and shown as an error box. And charts are most of a
 * report's work: workers draw them off the main thread, with a young
 * generation large enough that vega's many short-lived objects cost little.
 *
 * Processes, not worker threads: a worker thread's heap limit is best effort,
 * and some allocations (one large array) abort the whole process instead
 * (nodejs/node#47224); a child process that runs out of heap dies alone.
 *
 * A worker draws one chart at a time on its JavaScript thread and rasterizes
 * finished ones on its native thread pool meanwhile. Workers start when the first chart is asked for (or on
 * `warm()`), are replaced when one is stopped, and do not keep the process
 * alive when idle. `sharedChartPool()` is the one reports use by default.
 */
export interface ChartPoolOptions {
  /** Worker processes. Default: one per core, at most four. */
  size?: number;
  /** A chart that takes longer is stopped. Default 30 s. */
  chartTimeoutMs?: number;
  /** Heap limit of each worker; a chart that needs more is stopped. Default 512 MB. */
  memoryMb?: number;
  /** Workers idle this long are ended (they hold memory); the next chart starts new ones. Default: never. */
  idleTimeoutMs?: number;
  /**
   * Remember every chart drawn, by its spec's content, so that a chart drawn
   * while a run goes on is not drawn again for its report. Default false.
   */
  cache?: boolean;
}

export interface ChartJobOptions {
  /** Rows kept per inline dataset. Default 5 000. */
  maxRows?: number;
  /** Also rasterize to PNG. Default true. */
  png?: boolean;
  signal?: AbortSignal;
}

interface QueuedChart {
  job: ChartJob;
  resolve: (chart: RenderedChart) => void;
  reject: (error: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
  timer: NodeJS.Timeout | null;
  /** Times it was in a worker that died of another chart's fault. */
  bystander: number;
}

interface WorkerSlot {
  child: ChildProcess;
  ready: boolean;
  /** The chart on the worker's JavaScript thread: the one to blame when the worker dies. */
  drawing: QueuedChart | null;
  /** Drawn charts whose PNG is being made on the worker's native threads. */
  rasterizing: Set<QueuedChart>;
  /** Set when the pool ends the worker on purpose (timeout, abort, close, idle). */
  stopping: boolean;
}

const bootstrapPath = fileURLToPath(new URL('./chart-worker-bootstrap.mjs', import.meta.url));
const workerEntryUrl = new URL('./chart-worker.ts', import.meta.url).href;
// vega allocates a few objects per mark and channel; semi-spaces larger than
// V8's 16 MB default roughly halve the collector's time on 5 000-point charts.
const SEMI_SPACE_MB = 64;
// Charts a worker may have waiting for their PNG before it takes no more.
const MAX_RASTERIZING = 2;
// Workers that die before they are ready, in a row, before every waiting chart is failed.
const MAX_START_FAILURES = 2;
// A chart caught in two workers that died of other charts is failed rather than tried again.
const MAX_BYSTANDER_RETRIES = 1;

export class ChartPool {
  readonly size: number;
  readonly chartTimeoutMs: number;
  readonly memoryMb: number;
  readonly idleTimeoutMs: number | null;
  /** Charts handed to a worker, and charts served from the cache instead. */
  readonly stats = { drawn: 0, reused: 0 };
  private readonly queue: QueuedChart[] = [];
  private readonly slots = new Set<WorkerSlot>();
  private readonly drawn: Map<string, { png: boolean; chart: Promise<RenderedChart> }> | null;
  private nextId = 0;
  private startFailures = 0;
  private closed = false;
  private idleTimer: NodeJS.Timeout | null = null;

  constructor(options: ChartPoolOptions = {}) {
    // One per core even though each can keep two busy: vega's dataflow, on the
    // JavaScript thread, is the slower half, and a loaded machine rarely gives both.
    this.size = Math.max(1, Math.floor(options.size ?? Math.min(availableParallelism(), 4)));
    this.chartTimeoutMs = options.chartTimeoutMs ?? 30_000;
    this.memoryMb = options.memoryMb ?? 512;
    this.idleTimeoutMs = options.idleTimeoutMs ?? null;
    this.drawn = options.cache === true ? new Map() : null;
  }

  /** Draws one spec. Never rejects for a bad or hostile spec (that is an error chart); rejects when aborted or closed. */
  render(spec: unknown, options: ChartJobOptions = {}): Promise<RenderedChart> {
    if (options.signal?.aborted) return Promise.reject(options.signal.reason as Error);
    if (this.drawn === null) return this.enqueue(spec, options);
    const key = `${options.maxRows ?? DEFAULT_MAX_CHART_ROWS}:${contentHash(spec)}`;
    const png = options.png ?? true;
    const known = this.drawn.get(key);
    // A chart drawn without its PNG does not serve one that needs it.
    if (known && (known.png || !png)) {
      this.stats.reused += 1;
      return unlessAborted(known.chart, options.signal);
    }
    // Drawn for whoever asks next, so one caller's abort does not stop it.
    const { signal: _signal, ...shared } = options;
    const chart = this.enqueue(spec, shared);
    this.drawn.set(key, { png, chart });
    chart.catch(() => this.drawn?.delete(key));
    return unlessAborted(chart, options.signal);
  }

  /** Starts the workers now, so that they are ready when the charts come (one takes about half a second). */
  warm(): void {
    while (!this.closed && this.slots.size < this.size) this.spawn();
    this.updateRefs();
  }

  /** Stops every worker; charts not finished are rejected. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    if (shared === this) shared = null;
    const closedError = new Error('The chart pool was closed.');
    const unfinished = [...this.queue.splice(0), ...[...this.slots].flatMap(chartsOf)];
    for (const entry of unfinished) this.settle(entry, () => entry.reject(closedError));
    await Promise.all([...this.slots].map((slot) => this.stop(slot)));
  }

  private enqueue(spec: unknown, options: ChartJobOptions): Promise<RenderedChart> {
    if (this.closed) return Promise.reject(new Error('The chart pool is closed.'));
    return new Promise<RenderedChart>((resolve, reject) => {
      const entry: QueuedChart = {
        job: {
          id: this.nextId++,
          spec,
          maxRows: options.maxRows ?? DEFAULT_MAX_CHART_ROWS,
          png: options.png ?? true,
        },
        resolve,
        reject,
        signal: options.signal,
        onAbort: () => this.abort(entry),
        timer: null,
        bystander: 0,
      };
      options.signal?.addEventListener('abort', entry.onAbort, { once: true });
      this.queue.push(entry);
      this.pump();
    });
  }

  /** Hands waiting charts to free workers, and starts workers while charts wait for one. */
  private pump(): void {
    if (this.closed) return;
    for (const slot of this.slots) {
      if (this.queue.length === 0) break;
      if (slot.ready && slot.drawing === null && slot.rasterizing.size < MAX_RASTERIZING)
        this.dispatch(slot, this.queue.shift() as QueuedChart);
    }
    let starting = [...this.slots].filter((slot) => !slot.ready).length;
    while (this.queue.length > starting && this.slots.size < this.size) {
      this.spawn();
      starting += 1;
    }
    this.updateRefs();
  }

  private spawn(): void {
    const child = fork(bootstrapPath, [workerEntryUrl], {
      execArgv: [`--max-old-space-size=${this.memoryMb}`, `--max-semi-space-size=${SEMI_SPACE_MB}`],
      serialization: 'advanced',
      // stdout is dropped (vega-interpreter reports refused expressions there); stderr's tail tells an exhausted heap from a crash.
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    const slot: WorkerSlot = { child, ready: false, drawing: null, rasterizing: new Set(), stopping: false };
    this.slots.add(slot);
    let stderrTail = '';
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      stderrTail = (stderrTail + chunk).slice(-4096);
    });
    child.on('message', (raw: unknown) => this.onMessage(slot, raw));
    child.on('error', (error: Error) => this.onWorkerGone(slot, error.message, false));
    child.on('close', (code, signal) =>
      this.onWorkerGone(
        slot,
        `the chart worker ended (${signal ?? `exit code ${code}`})${stderrTail ? `: ${lastLine(stderrTail)}` : ''}`,
        /heap out of memory|Allocation failed/i.test(stderrTail),
      ),
    );
  }

  private dispatch(slot: WorkerSlot, entry: QueuedChart): void {
    this.stats.drawn += 1;
    slot.drawing = entry;
    entry.timer = setTimeout(() => {
      const seconds = (this.chartTimeoutMs / 1000).toLocaleString('en-US');
      this.endWorker(
        slot,
        entry,
        failedChart(`The chart took longer than ${seconds} s to draw and was stopped.`),
      );
    }, this.chartTimeoutMs);
    slot.child.send(entry.job);
  }

  private onMessage(slot: WorkerSlot, raw: unknown): void {
    const message = chartWorkerMessageSchema.safeParse(raw);
    if (!message.success) {
      this.endWorker(slot, slot.drawing, failedChart('The chart renderer sent a malformed message.'));
      return;
    }
    const data = message.data;
    const entry = [...chartsOf(slot)].find((chart) => data.type !== 'ready' && chart.job.id === data.id);
    if (data.type === 'ready') {
      slot.ready = true;
      this.startFailures = 0;
    } else if (data.type === 'drawn' && entry === slot.drawing && entry) {
      slot.drawing = null;
      slot.rasterizing.add(entry);
    } else if (entry && data.type !== 'drawn') {
      this.detach(slot, entry);
      this.finish(
        entry,
        data.type === 'chart' ? data.chart : failedChart(`The chart renderer failed: ${data.message}`),
      );
    }
    this.pump();
  }

  /**
   * The worker died (crash, heap limit) or was ended: the chart it was
   * drawing is to blame and becomes an error; the ones it was rasterizing are
   * drawn again elsewhere. A replacement starts if charts wait.
   */
  private onWorkerGone(slot: WorkerSlot, reason: string, outOfMemory: boolean): void {
    if (!this.slots.delete(slot)) return;
    if (!slot.stopping) {
      if (!slot.ready) this.startFailures += 1;
      const blamed = slot.drawing;
      if (blamed)
        this.finish(
          blamed,
          failedChart(
            outOfMemory
              ? `The chart needed more than ${this.memoryMb} MB of memory to draw and was stopped.`
              : `The chart renderer stopped: ${reason}`,
          ),
        );
      this.requeue([...slot.rasterizing], reason);
    }
    if (this.startFailures >= MAX_START_FAILURES) {
      const chart = failedChart(`The chart renderer could not start: ${reason}`);
      for (const entry of this.queue.splice(0)) this.finish(entry, chart);
    }
    this.pump();
  }

  /** Ends a worker because of `culprit` (timeout, abort, bad message); the others in it are drawn again. */
  private endWorker(slot: WorkerSlot, culprit: QueuedChart | null, chart: RenderedChart | null): void {
    const bystanders = [...chartsOf(slot)].filter((entry) => entry !== culprit);
    void this.stop(slot);
    if (culprit && chart) this.finish(culprit, chart);
    this.requeue(bystanders, 'another chart in its worker was stopped');
    this.pump();
  }

  private requeue(entries: QueuedChart[], reason: string): void {
    for (const entry of entries.reverse()) {
      if (entry.timer) clearTimeout(entry.timer);
      entry.timer = null;
      entry.bystander += 1;
      if (entry.bystander > MAX_BYSTANDER_RETRIES)
        this.finish(entry, failedChart(`The chart renderer stopped: ${reason}`));
      else this.queue.unshift(entry);
    }
  }

  private detach(slot: WorkerSlot, entry: QueuedChart): void {
    if (slot.drawing === entry) slot.drawing = null;
    slot.rasterizing.delete(entry);
  }

  private finish(entry: QueuedChart, chart: RenderedChart): void {
    this.settle(entry, () => entry.resolve(chart));
  }

  private abort(entry: QueuedChart): void {
    const reason: unknown = entry.signal?.reason;
    const queued = this.queue.indexOf(entry);
    if (queued >= 0) this.queue.splice(queued, 1);
    const slot = [...this.slots].find((candidate) => chartsOf(candidate).includes(entry));
    this.settle(entry, () => entry.reject(reason));
    if (slot) this.endWorker(slot, entry, null);
    else this.pump();
  }

  private settle(entry: QueuedChart, settle: () => void): void {
    if (entry.timer) clearTimeout(entry.timer);
    entry.timer = null;
    entry.signal?.removeEventListener('abort', entry.onAbort);
    settle();
  }

  private async stop(slot: WorkerSlot): Promise<void> {
    slot.stopping = true;
    this.slots.delete(slot);
    const { child } = slot;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    // An idle worker is unreferenced: held again, or this process could end while awaiting its exit.
    holdProcess(child, true);
    child.kill('SIGKILL');
    await exited;
  }

  /**
   * Idle workers must not keep the process alive; busy and starting ones
   * must, or an awaited chart never comes. Workers idle for idleTimeoutMs end.
   */
  private updateRefs(): void {
    const waiting = this.queue.length > 0;
    let busy = waiting;
    for (const slot of this.slots) {
      const held = chartsOf(slot).length > 0 || (waiting && !slot.ready);
      holdProcess(slot.child, held);
      busy ||= held;
    }
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    if (busy || this.idleTimeoutMs === null || this.slots.size === 0) return;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      for (const slot of this.slots) if (chartsOf(slot).length === 0) void this.stop(slot);
    }, this.idleTimeoutMs).unref();
  }
}

let shared: ChartPool | null = null;

/** The pool reports use by default: one per process, its workers ended after 10 s without charts. */
export function sharedChartPool(): ChartPool {
  shared ??= new ChartPool({ idleTimeoutMs: 10_000 });
  return shared;
}

function chartsOf(slot: WorkerSlot): QueuedChart[] {
  return slot.drawing ? [slot.drawing, ...slot.rasterizing] : [...slot.rasterizing];
}

/** Whether a worker (its process, IPC channel and stderr pipe) keeps this process alive. */
function holdProcess(child: ChildProcess, held: boolean): void {
  const handles: Array<{ ref(): unknown; unref(): unknown } | undefined | null> = [
    child,
    child.channel,
    child.stderr as Socket | null,
  ];
  for (const handle of handles) {
    if (held) handle?.ref();
    else handle?.unref();
  }
}

function contentHash(value: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify(value) ?? 'undefined')
    .digest('hex');
}

function lastLine(text: string): string {
  return text.trim().split('\n').at(-1)?.slice(0, 300) ?? '';
}
