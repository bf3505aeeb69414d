import path from 'node:path';
import type { AgentEvent } from '../agent/index.ts';
import type { ChartPool } from '../report/chart-pool.ts';

/**
 * Charts drawn while a run or a chat goes on, so that the report written at
 * the end (or on `/report`) only assembles them: each chart a cell displays
 * is sent to the chart workers as its `execution-end` event arrives, while
 * the model thinks about the next step. Drawn charts are kept in the run
 * folder's `.chart-cache/`, so a later `datalyst report` draws none again.
 *
 * The CLI watches the events; the agent knows nothing of reports (layering:
 * cli → agent, cli → report).
 */
export interface RunCharts {
  /** The pool to hand to the report: it holds the charts drawn so far (and draws the rest). */
  readonly pool: ChartPool;
  /** Call with every event of the run; charts of an `execution-end` are drawn now. */
  observe(event: AgentEvent): void;
  close(): Promise<void>;
}

export interface RunChartsOptions {
  /** The run folder: charts are kept in its `.chart-cache/`. */
  outDir: string;
  /** Whether the report needs PNGs (Markdown and notebooks do; HTML does not). */
  png: boolean;
  /** Workers idle this long end (a chat waits for its user); default: never. */
  idleTimeoutMs?: number;
  /** Start the workers now, so they are ready when the first cell ends (`analyze` starts them with the run). Default false. */
  warm?: boolean;
}

export async function drawRunCharts(options: RunChartsOptions): Promise<RunCharts> {
  const { ChartPool } = await import('../report/chart-pool.ts');
  const pool = new ChartPool({
    cache: true,
    cacheDir: path.join(options.outDir, '.chart-cache'),
    ...(options.idleTimeoutMs === undefined ? {} : { idleTimeoutMs: options.idleTimeoutMs }),
  });
  if (options.warm === true) pool.warm();
  return {
    pool,
    observe(event) {
      if (event.type !== 'execution-end') return;
      // Whatever comes of it (an error box, or a redraw if the pool failed) is the report's to show.
      for (const chart of event.result.charts)
        if (!('omitted' in chart)) void pool.render(chart.spec, { png: options.png }).catch(() => undefined);
    },
    close: () => pool.close(),
  };
}

/** Whether these report formats need charts as PNG. */
export function reportNeedsChartPng(formats: readonly string[]): boolean {
  return formats.some((format) => format === 'md' || format === 'ipynb');
}
