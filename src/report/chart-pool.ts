import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import type { Socket } from 'node:net';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { ChartDiskCache } from './chart-disk-cache.ts';
import { DEFAULT_MAX_CHART_ROWS, failedChart } from './rendered-chart.ts';
import type { RenderedChart } from './rendered-chart.ts';
import { chartWorkerMessageSchema } from './chart-worker-protocol.ts';
import { unlessAborted } from '../util/unless-aborted.ts';
import { CancelledError } from '../errors/index.ts';
import type { ChartJob, ChartSource } from './chart-worker-protocol.ts';

export interface ChartPoolOptions {
  /** Worker processes. Default: one per core, at most four. */
  size?: number;
  /** A chart that takes longer is stopped. Default 30 s. */
  chartTimeoutMs?: number;
  /** Old-generation heap limit of each worker (young generation apart); a chart that needs more is stopped. Default 512 MB. */
  memoryMb?: number;
  /** Workers idle this long are ended (they hold memory); the next chart starts new ones. Default: never. */
  idleTimeoutMs?: number;
  /**
   * Remember every chart drawn, by its spec's content, so that a chart drawn
   * while a run goes on is not drawn again for its report. Default false.
   */
  cache?: boolean;
  /**
   * With `cache`, also keep drawn charts in this folder and take them from it
   * (chart-disk-cache.ts): a run folder's `.chart-cache`, so that the report
   * rendered again by another process draws nothing. Default: memory only.
   */
  cacheDir?: string;
  /**
   * Scheduling niceness of the workers (1–19; higher gives way to other work
   * sooner), for charts drawn in the background: on a machine whose cores the
   * kernels keep busy they draw in the time nobody else wants. Default: this
   * process's.
   */
  niceness?: number;
}

export interface ChartJobOptions {
  /** Rows kept per inline dataset. Default 5 000. */
  maxRows?: number;
  /** Also rasterize to PNG. Default true. */
  png?: boolean;
  /** Make the SVG's ids unique to the chart, for a page of many charts. Default true. */
  scopeIds?: boolean;
  signal?: AbortSignal;
}

interface QueuedChart {
  job: ChartJob;
  resolve: (chart: RenderedChart) => void;
  reject: (error: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
  timer: NodeJS.Timeout | null;
  /** Times it was in a worker that died unexplained while another chart was drawn. */
  bystander: number;
  /** Told when the chart fails for the pool's reasons (no worker starts), not the spec's. */
  onPoolFailure: (() => void) | undefined;
}

interface WorkerSlot {
  child: ChildProcess;
  ready: boolean;
  /** The chart on the worker's JavaScript thread: the one to blame when the worker dies. */
  drawing: QueuedChart | null;
  /** Drawn charts whose PNG is being made on the worker's native threads. */
  rasterizing: Set<QueuedChart>;
  /** Set when the pool ends the worker on purpose (timeout, abort, close, idle); its messages are ignored from then on. */
  stopping: boolean;
  /** Ends a worker that never says it is ready. */
  startTimer: NodeJS.Timeout | null;
}

const bootstrapPath = fileURLToPath(new URL('./chart-worker-bootstrap.mjs', import.meta.url));
// From a clone this module is TypeScript and so is the worker (the bootstrap
// registers tsx); from the published package both are compiled JavaScript.
const workerEntryUrl = new URL(
  import.meta.url.endsWith('.ts') ? './chart-worker.ts' : './chart-worker.js',
  import.meta.url,
).href;
// vega allocates a few objects per mark and channel; semi-spaces larger than
// V8's 16 MB default roughly halve the collector's time on 5 000-point charts.
const SEMI_SPACE_MB = 64;
// Charts a worker may have waiting for their PNG before it takes no more.
const MAX_RASTERIZING = 2;
// Workers that die before they are ready, with none ready in between, before every waiting chart is failed.
const MAX_START_FAILURES = 2;
// A worker not ready by then is stuck (it takes about half a second).
const START_TIMEOUT_MS = 60_000;
// The worker's environment: no API keys or other secrets of this process reach the code that reads untrusted specs.
const WORKER_ENVIRONMENT = [
  'PATH',
  'HOME',
  'TMPDIR',
  'TMP',
  'TEMP',
  'LANG',
  'LC_ALL',
  'LC_CTYPE',
  'XDG_DATA_HOME',
  'XDG_DATA_DIRS',
  'SYSTEMROOT',
];
// A chart caught in two workers that died of other charts is failed rather than tried again.
const MAX_BYSTANDER_RETRIES = 1;

/**
 * Draws chart specs in worker processes. Two reasons, both about the specs
 * coming from an untrusted kernel: a spec can ask vega for far more work than
 * its data suggests (a `sequence` of 10⁸ rows exhausts the heap and would take
 * the whole process down; a slow one would hang the report), so each worker
 * has a heap limit (512 MB of old generation by default) and each chart a time
 * limit, and a chart that breaks either is stopped and shown as an error box.
 * And charts are most of a report's work: workers draw them off the main
 * thread, with a young generation large enough that vega's many short-lived
 * objects cost little. Workers get none of this process's environment but
 * what Node needs: no API keys.
 *
 * Processes, not worker threads: a worker thread's heap limit is best effort,
 * and some allocations (one large array) abort the whole process instead
 * (nodejs/node#47224); a child process that runs out of heap dies alone.
 *
 * A worker draws one chart at a time on its JavaScript thread and rasterizes
 * finished ones on its native thread pool meanwhile. Workers start when the
 * first chart is asked for (or on `warm()`), are replaced when one is
 * stopped, do not keep the process alive when idle, and are killed when the
 * process exits. `sharedChartPool()` is the one reports use by default.
 */
export class ChartPool {
  readonly size: number;
  readonly chartTimeoutMs: number;
  readonly memoryMb: number;
  readonly idleTimeoutMs: number | null;
  readonly niceness: number;
  /**
   * Charts handed to a worker (a chart drawn again after its worker died
   * counts again), charts served from the cache instead, and PNGs made from
   * a kept chart's SVG (a chart kept without its PNG is not drawn again).
   */
  readonly stats = { drawn: 0, reused: 0, rasterized: 0 };
  private readonly queue: QueuedChart[] = [];
  private readonly slots = new Set<WorkerSlot>();
  private readonly drawn: Map<string, { png: boolean; chart: Promise<RenderedChart> }> | null;
  private disk: ChartDiskCache | null = null;
  private nextId = 0;
  private startFailures = 0;
  private closed = false;
  private idleTimer: NodeJS.Timeout | null = null;
  // Workers die with this process even when it ends without close() (a second Ctrl-C, process.exit).
  private killsOnExit = false;
  private readonly killOnExit = (): void => {
    for (const slot of this.slots) slot.child.kill('SIGKILL');
  };

  constructor(options: ChartPoolOptions = {}) {
    // One per core even though each can keep two busy: vega's dataflow, on the
    // JavaScript thread, is the slower half, and a loaded machine rarely gives both.
    this.size = Math.max(1, Math.floor(options.size ?? Math.min(availableParallelism(), 4)));
    this.chartTimeoutMs = options.chartTimeoutMs ?? 30_000;
    this.memoryMb = options.memoryMb ?? 512;
    this.idleTimeoutMs = options.idleTimeoutMs ?? null;
    this.niceness = Math.min(19, Math.max(0, Math.floor(options.niceness ?? 0)));
    this.drawn = options.cache === true ? new Map() : null;
    if (options.cacheDir !== undefined) this.persistTo(options.cacheDir);
  }

  /** Keeps drawn charts in `dir` from now on (see `cacheDir`); for a pool made before its run folder was. */
  persistTo(dir: string): void {
    if (this.drawn !== null && this.disk?.dir !== dir) this.disk = new ChartDiskCache(dir);
  }

  /** Draws one spec. Never rejects for a bad or hostile spec (that is an error chart); rejects when aborted or closed. */
  render(spec: unknown, options: ChartJobOptions = {}): Promise<RenderedChart> {
    if (options.signal?.aborted) return Promise.reject(cancelled(options.signal.reason));
    const key = this.drawn === null ? null : chartCacheKey(spec, options);
    if (this.drawn === null || key === null) return this.enqueue(spec, options);
    const png = options.png ?? true;
    const known = this.drawn.get(key);
    if (known && (known.png || !png)) {
      this.stats.reused += 1;
      return unlessAborted(known.chart, options.signal, cancelled);
    }
    // Drawn for whoever asks next, so one caller's abort does not stop it.
    const { signal: _signal, ...shared } = options;
    const disk = this.disk;
    const forget = (): void => this.forget(key, chart);
    const draw = (): Promise<RenderedChart> => this.enqueue(spec, shared, forget);
    // A chart kept without its PNG is not drawn again when one is needed: its SVG is rasterized.
    const completed = (kept: RenderedChart): Promise<RenderedChart> => {
      if (kept.svg === null) return draw();
      this.stats.reused += 1;
      return !png || kept.png !== null ? Promise.resolve(kept) : this.addPng(kept, forget);
    };
    let chart: Promise<RenderedChart>;
    if (known) chart = known.chart.then((kept) => completed(kept));
    else if (disk === null) chart = draw();
    else
      chart = disk
        .read(key, png)
        .then((kept) => kept ?? (png ? disk.read(key, false) : null))
        .then(async (kept) => {
          if (kept !== null && (kept.png !== null || !png)) {
            this.stats.reused += 1;
            return kept;
          }
          const drawn = kept === null ? await draw() : await completed(kept);
          disk.write(key, drawn);
          return drawn;
        });
    this.drawn.set(key, { png, chart });
    chart.catch(() => this.forget(key, chart));
    return unlessAborted(chart, options.signal, cancelled);
  }

  /** The kept chart with a PNG rasterized from its SVG in a worker (under the same limits), with what that noted. */
  private async addPng(kept: RenderedChart, onPoolFailure: () => void): Promise<RenderedChart> {
    const raster = await this.enqueue(null, { png: true }, onPoolFailure, undefined, kept.svg ?? '');
    if (raster.error !== null) {
      // A PNG that could not be made this time (a time limit on a busy machine) is tried again next time.
      onPoolFailure();
      return { ...kept, png: null, notes: [...kept.notes, `No PNG: ${raster.error}`] };
    }
    return { ...kept, png: raster.png, notes: [...kept.notes, ...raster.notes] };
  }

  /**
   * Draws a spec given as files (`datalyst chart`): the spec's text and an
   * optional data file, both parsed in the worker under its limits, never in
   * this process. Not cached. Never rejects for a bad file (that is an error chart).
   */
  renderSource(source: ChartSource, options: ChartJobOptions = {}): Promise<RenderedChart> {
    if (options.signal?.aborted) return Promise.reject(cancelled(options.signal.reason));
    return this.enqueue(null, options, undefined, source);
  }

  /** Drops a cache entry (a rejection, or a failure that was the pool's and not the spec's), unless a newer one replaced it. */
  private forget(key: string, chart: Promise<RenderedChart>): void {
    if (this.drawn?.get(key)?.chart === chart) this.drawn.delete(key);
  }

  /** Process ids of the workers now running (for diagnostics and tests). */
  workerPids(): number[] {
    return [...this.slots].flatMap((slot) => (slot.child.pid === undefined ? [] : [slot.child.pid]));
  }

  /**
   * Starts the workers now, so that they are ready when the charts come (one
   * takes about half a second): all of them, or as many as `charts` will keep busy.
   */
  warm(charts = Infinity): void {
    while (!this.closed && this.slots.size < Math.min(this.size, charts)) this.spawn();
    this.updateRefs();
  }

  /** Stops every worker; charts not finished are rejected. */
  async close(): Promise<void> {
    this.closed = true;
    process.off('exit', this.killOnExit);
    this.killsOnExit = false;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    if (shared === this) shared = null;
    if (background === this) background = null;
    const closedError = new Error('The chart pool was closed.');
    const unfinished = [...this.queue.splice(0), ...[...this.slots].flatMap(chartsOf)];
    for (const entry of unfinished) this.settle(entry, () => entry.reject(closedError));
    await Promise.all([...this.slots].map((slot) => this.stop(slot)));
    await this.disk?.flush();
  }

  private enqueue(
    spec: unknown,
    options: ChartJobOptions,
    onPoolFailure?: () => void,
    source?: ChartSource,
    rasterize?: string,
  ): Promise<RenderedChart> {
    if (this.closed) return Promise.reject(new Error('The chart pool is closed.'));
    return new Promise<RenderedChart>((resolve, reject) => {
      const entry: QueuedChart = {
        job: {
          id: this.nextId++,
          spec,
          ...(source === undefined ? {} : { source }),
          ...(rasterize === undefined ? {} : { rasterize }),
          maxRows: options.maxRows ?? DEFAULT_MAX_CHART_ROWS,
          png: options.png ?? true,
          scopeIds: options.scopeIds ?? true,
        },
        resolve,
        reject,
        signal: options.signal,
        onAbort: () => this.abort(entry),
        timer: null,
        bystander: 0,
        onPoolFailure,
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
    if (!this.killsOnExit) {
      process.on('exit', this.killOnExit);
      this.killsOnExit = true;
    }
    const child = fork(bootstrapPath, [workerEntryUrl, String(this.niceness)], {
      execArgv: [
        `--max-old-space-size=${this.memoryMb}`,
        `--max-semi-space-size=${SEMI_SPACE_MB}`,
        // Start at those sizes rather than grow into them through a storm of early collections: the
        // first charts of a new worker drew about 15 % faster (cold 20 charts 2.75 -> 2.3 s, median of 4).
        `--min-semi-space-size=${SEMI_SPACE_MB}`,
        `--initial-old-space-size=${Math.min(256, this.memoryMb)}`,
      ],
      env: workerEnvironment(process.env),
      serialization: 'advanced',
      // stdout is dropped (vega-interpreter reports refused expressions there); stderr's tail tells an exhausted heap from a crash.
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    const slot: WorkerSlot = {
      child,
      ready: false,
      drawing: null,
      rasterizing: new Set(),
      stopping: false,
      startTimer: null,
    };
    this.slots.add(slot);
    slot.startTimer = setTimeout(() => {
      this.startFailures += 1;
      this.endWorker(slot, null, null);
    }, START_TIMEOUT_MS);
    slot.startTimer.unref();
    let stderrTail = '';
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      stderrTail = (stderrTail + chunk).slice(-4096);
    });
    child.on('message', (raw: unknown) => this.onMessage(slot, raw));
    // A failed spawn has no pid and no 'close' to wait for; any other error (a send to a worker
    // that just died) ends the worker, and its 'close' says why.
    child.on('error', (error: Error) => {
      if (child.pid === undefined) this.onWorkerGone(slot, error.message, false);
      else child.kill('SIGKILL');
    });
    child.on('close', (code, signal) =>
      this.onWorkerGone(
        slot,
        `the chart worker ended (${signal ?? `exit code ${code}`})${stderrTail ? `: ${lastLine(stderrTail)}` : ''}`,
        /heap out of memory|Allocation failed/i.test(stderrTail),
      ),
    );
  }

  private dispatch(slot: WorkerSlot, entry: QueuedChart): void {
    if (entry.job.rasterize === undefined) this.stats.drawn += 1;
    else this.stats.rasterized += 1;
    slot.drawing = entry;
    entry.timer = setTimeout(() => {
      const seconds = (this.chartTimeoutMs / 1000).toLocaleString('en-US');
      this.endWorker(
        slot,
        entry,
        failedChart(`The chart took longer than ${seconds} s to draw and was stopped.`),
      );
    }, this.chartTimeoutMs);
    // A worker that has just died is not sent to: its 'close' comes next and puts the chart back in the queue.
    if (slot.child.connected) slot.child.send(entry.job);
  }

  private onMessage(slot: WorkerSlot, raw: unknown): void {
    // Messages a worker sent before it was ended still arrive; its charts are elsewhere by now.
    if (slot.stopping || !this.slots.has(slot)) return;
    const message = chartWorkerMessageSchema.safeParse(raw);
    if (!message.success) {
      const id = (raw as { id?: unknown } | null)?.id;
      const culprit = chartsOf(slot).find((chart) => chart.job.id === id) ?? slot.drawing;
      this.endWorker(slot, culprit, failedChart('The chart renderer sent a malformed message.'));
      return;
    }
    const data = message.data;
    const entry = [...chartsOf(slot)].find((chart) => data.type !== 'ready' && chart.job.id === data.id);
    if (data.type === 'ready') {
      slot.ready = true;
      if (slot.startTimer) clearTimeout(slot.startTimer);
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
    if (slot.startTimer) clearTimeout(slot.startTimer);
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
      this.requeue([...slot.rasterizing], reason, true);
    }
    if (this.startFailures >= MAX_START_FAILURES) {
      const chart = failedChart(`The chart renderer could not start: ${reason}`);
      for (const entry of this.queue.splice(0)) {
        entry.onPoolFailure?.();
        this.finish(entry, chart);
      }
    }
    this.pump();
  }

  /** Ends a worker because of `culprit` (timeout, abort, bad message); the others in it are drawn again. */
  private endWorker(slot: WorkerSlot, culprit: QueuedChart | null, chart: RenderedChart | null): void {
    const bystanders = chartsOf(slot).filter((entry) => entry !== culprit);
    slot.drawing = null;
    slot.rasterizing.clear();
    void this.stop(slot);
    if (culprit && chart) this.finish(culprit, chart);
    // The pool ended the worker for a known reason: the others in it are not to blame and lose no retry.
    this.requeue(bystanders, 'another chart in its worker was stopped', false);
    this.pump();
  }

  private requeue(entries: QueuedChart[], reason: string, countsAsRetry: boolean): void {
    for (const entry of entries.reverse()) {
      if (entry.timer) clearTimeout(entry.timer);
      entry.timer = null;
      if (countsAsRetry) entry.bystander += 1;
      if (entry.bystander > MAX_BYSTANDER_RETRIES) {
        entry.onPoolFailure?.();
        this.finish(entry, failedChart(`The chart renderer stopped: ${reason}`));
      } else this.queue.unshift(entry);
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
    this.settle(entry, () => entry.reject(cancelled(reason)));
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
    if (slot.startTimer) clearTimeout(slot.startTimer);
    const { child } = slot;
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
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
let background: ChartPool | null = null;

/** The pool reports use by default: one per process, its workers ended after 10 s without charts. */
export function sharedChartPool(): ChartPool {
  shared ??= new ChartPool({ idleTimeoutMs: 10_000 });
  return shared;
}

/**
 * The pool for charts nobody is waiting for yet (the server draws each chart
 * as its cell ends, for the web UI's first view): its workers run at
 * niceness 10, so on a machine whose cores the kernels keep busy they take
 * what the turns leave (~10 % of a core against one busy process) instead of
 * a share equal to a kernel's. Niceness 10 and not 19: a chart's 30 s limit
 * counts from when a worker takes it, and at 19 (~1.5 %) a 0.5 s chart
 * would reach it. One per process, its workers ended after 10 s without charts.
 */
export function backgroundChartPool(): ChartPool {
  background ??= new ChartPool({ idleTimeoutMs: 10_000, niceness: 10 });
  return background;
}

/** What a worker's environment keeps of this process's: nothing secret, only what Node and fonts need. */
export function workerEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(
    WORKER_ENVIRONMENT.flatMap((name) => (env[name] === undefined ? [] : [[name, env[name]]])),
  );
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

/**
 * A chart's key in a pool's cache and in a run folder's `.chart-cache/`: the
 * spec's content, the row cap and the id scoping (what changes the SVG).
 * Null for what JSON cannot hold (cycles, BigInt): such a spec is not cached.
 * The server keeps the charts it draws for the web UI under the same key, so
 * a report of the thread finds them.
 */
export function chartCacheKey(
  spec: unknown,
  options: Pick<ChartJobOptions, 'maxRows' | 'scopeIds'> = {},
): string | null {
  const hash = contentHash(spec);
  return hash === null
    ? null
    : `${options.maxRows ?? DEFAULT_MAX_CHART_ROWS}:${options.scopeIds ?? true}:${hash}`;
}

/** The spec's content as a cache key; null for what JSON cannot hold (cycles, BigInt): such a spec is not cached. */
function contentHash(value: unknown): string | null {
  try {
    return createHash('sha256')
      .update(JSON.stringify(value) ?? 'undefined')
      .digest('hex');
  } catch {
    return null;
  }
}

function lastLine(text: string): string {
  return text.trim().split('\n').at(-1)?.slice(0, 300) ?? '';
}

/** What an aborted chart rejects with: the library's CancelledError (a CancelledError given as the abort's reason is kept). */
function cancelled(reason: unknown): CancelledError {
  return reason instanceof CancelledError ? reason : new CancelledError(reason);
}
