import { createHash } from 'node:crypto';
import type { ExecutionRecord, TraceRecord } from '../trace/schema.ts';
import { sharedChartPool } from './chart-pool.ts';
import type { ChartPool } from './chart-pool.ts';
import type { RenderedChart } from './rendered-chart.ts';
import { installedPackageVersion } from './package-version.ts';
import { highlightJsVersion } from './python-highlighter.ts';
import { buildNumberIndex, summarizeGrounding } from '../trace/number-grounding.ts';
import type { GroundingSummary, NumberIndex } from '../trace/number-grounding.ts';
import { groundingSources } from '../trace/grounding-sources.ts';
import { renderGroundedAnswer } from './safe-markdown.ts';
import type { GroundedAnswer } from './safe-markdown.ts';
import { buildRunView } from './run-view.ts';
import type { RunView, TurnView } from './run-view.ts';
import { formatBytes } from './report-format.ts';
import type { ReportAudience } from './outcome-look.ts';

/**
 * Everything the three formats share, computed once: the folded trace, every
 * chart rendered (SVG and PNG), the grounded answer, the checked figures.
 */
export interface PreparedReport {
  view: RunView;
  /** Keyed by `chartKey(outputId, index)`. */
  charts: ReadonlyMap<string, RenderedChart>;
  /** Matplotlib figures that are real PNGs, keyed by `figureKey(outputId, index)`. */
  figures: ReadonlyMap<string, PreparedFigure>;
  answer: GroundedAnswer | null;
  grounding: GroundingSummary;
  /** The numbers of every execution output, to ground other text than the answer (the data section). */
  numberIndex: NumberIndex;
  /**
   * Each question of a thread with its answer, grounded in the outputs up to
   * the end of its turn. Empty for a run of one question (`answer` is its answer).
   */
  turns: PreparedTurn[];
  /** A thread's answers together (each grounded up to its turn); null for a run of one question. */
  conversation: ConversationGrounding | null;
  toolVersions: ReadonlyArray<readonly [string, string]>;
  generatedAt: string;
  /** Who acts on the report's advice (outcome-look.ts): the command line's user, or someone asking a server. */
  audience: ReportAudience;
}

export interface ConversationGrounding {
  /** Turns that ended with an answer. */
  answers: number;
  grounding: GroundingSummary;
}

export interface PreparedTurn {
  view: TurnView;
  answer: GroundedAnswer | null;
}

export interface PreparedFigure {
  png: Uint8Array;
  base64: string;
  widthPx: number;
  heightPx: number;
}

export interface PrepareOptions {
  /** Rows kept per inline chart dataset. Default 5 000. */
  maxChartRows?: number;
  /** Rasterize charts to PNG (needed by Markdown and the notebook). Default true. */
  chartPng?: boolean;
  signal?: AbortSignal;
  /** Fixed "generated at" time, for byte-stable output in tests. */
  now?: Date;
  /** Worker processes that draw the charts; default: `sharedChartPool()`. */
  chartPool?: ChartPool;
  /** Default `cli`. */
  audience?: ReportAudience;
}

/**
 * Why a figure or chart of the trace has no image, in words for a reader; null
 * when it has one. The agent leaves visuals out of the trace past a per-run
 * cap on their bytes (`omitted`), and the report drops figures that are not a
 * PNG (the kernel's messages are untrusted).
 */
export function missingVisualNote(
  visual: { id: string; omitted?: true; sizeBytes?: number },
  label: string,
): string {
  if (visual.omitted === true) {
    const size = visual.sizeBytes === undefined ? '' : ` (${formatBytes(visual.sizeBytes)})`;
    return `${label} was not kept in the trace${size}: the run's cap on figure bytes was spent.`;
  }
  return `${label} is not a valid PNG and was left out.`;
}

/**
 * An output id as it may appear in a file name (`assets/<key>.png`) or an
 * HTML id: a trace's `outputId` is any string (a hostile or hand-edited trace
 * may hold `../..` or quotes), so anything but the kernel's `[A-Za-z0-9_-]`
 * is replaced, with a hash of the whole id so that two such ids stay apart.
 */
function safeOutputId(outputId: string): string {
  if (/^[A-Za-z0-9_-]{1,64}$/.test(outputId)) return outputId;
  const hash = createHash('sha256').update(outputId).digest('hex').slice(0, 10);
  return `${outputId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64)}-${hash}`;
}

export function chartKey(outputId: string, index: number): string {
  return `${safeOutputId(outputId)}-chart-${index + 1}`;
}

export function figureKey(outputId: string, index: number): string {
  return `${safeOutputId(outputId)}-figure-${index + 1}`;
}

/** The anchor of an execution output in the HTML report. */
export function outputAnchor(outputId: string): string {
  return `output-${outputId.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

export async function prepareReport(
  records: readonly TraceRecord[],
  options: PrepareOptions = {},
): Promise<PreparedReport> {
  const view = buildRunView(records);
  // The charts are drawn in worker processes; the rest is done here meanwhile.
  const drawing = renderAllCharts(view.executions, options);
  // Awaited below; this keeps a rejection meanwhile (an abort) from counting as unhandled.
  drawing.catch(() => undefined);
  const figures = decodeFigures(view.executions);
  const index = buildNumberIndex(groundingSources(view.executions));
  // A re-run's stale / not-grounded marks are styled in its answer only.
  const rerunMarks = { rerunMarks: view.start.rerunOf !== undefined };
  const answer =
    view.answer === null
      ? null
      : renderGroundedAnswer(view.answer, index, outputAnchor, { ...rerunMarks, nestHeadingsUnder: 2 });
  const turns: PreparedTurn[] = [];
  if (view.turns.length > 1) {
    let seen = 0;
    for (const turn of view.turns) {
      seen += turn.executions.length;
      const upToTurn = buildNumberIndex(groundingSources(view.executions.slice(0, seen)));
      turns.push({
        view: turn,
        answer:
          turn.answer === null
            ? null
            : // Under its question's <h3>.
              renderGroundedAnswer(turn.answer, upToTurn, outputAnchor, {
                ...rerunMarks,
                nestHeadingsUnder: 3,
              }),
      });
    }
  }
  const charts = await drawing;
  const answered = turns.flatMap((turn) => (turn.answer === null ? [] : [turn.answer]));
  return {
    turns,
    conversation:
      turns.length === 0
        ? null
        : {
            answers: answered.length,
            grounding: summarizeGrounding(answered.flatMap((turnAnswer) => turnAnswer.numbers)),
          },
    view,
    charts,
    figures,
    answer,
    grounding: summarizeGrounding(answer?.numbers ?? []),
    numberIndex: index,
    toolVersions: [
      ['Datalyst', view.start.environment.datalystVersion],
      ['Node.js (run)', view.start.environment.nodeVersion],
      ['Sandbox', view.start.environment.sandboxBackend],
      // Traces written before the runtime was recorded have none.
      ...(view.start.environment.runtime === undefined
        ? []
        : [['Container runtime', runtimeLabel(view.start.environment.runtime)] as [string, string]]),
      ['Runner image', view.start.environment.image ?? 'none'],
      ['Node.js (report)', process.version],
      ['vega', installedPackageVersion('vega')],
      ['vega-lite', installedPackageVersion('vega-lite')],
      ['highlight.js', highlightJsVersion],
    ],
    generatedAt: (options.now ?? new Date()).toISOString(),
    audience: options.audience ?? 'cli',
  };
}

function runtimeLabel(runtime: string): string {
  return runtime === 'runsc' ? 'runsc (gVisor)' : runtime;
}

/** Every chart of the trace, drawn in worker processes (see chart-pool.ts), in trace order. */
async function renderAllCharts(
  executions: readonly ExecutionRecord[],
  options: PrepareOptions,
): Promise<Map<string, RenderedChart>> {
  const jobs = executions.flatMap((execution) =>
    execution.result.charts.flatMap((chart, index) =>
      'omitted' in chart ? [] : [{ key: chartKey(execution.outputId, index), spec: chart.spec }],
    ),
  );
  const pool = options.chartPool ?? sharedChartPool();
  const charts = await Promise.all(
    jobs.map((job) =>
      pool.render(job.spec, {
        png: options.chartPng ?? true,
        ...(options.maxChartRows === undefined ? {} : { maxRows: options.maxChartRows }),
        ...(options.signal ? { signal: options.signal } : {}),
      }),
    ),
  );
  return new Map(jobs.map((job, index) => [job.key, charts[index] as RenderedChart]));
}

const pngMagic = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** Keeps only figures whose bytes really are a PNG: the kernel's messages are untrusted. */
export function decodeFigures(executions: readonly ExecutionRecord[]): Map<string, PreparedFigure> {
  const figures = new Map<string, PreparedFigure>();
  for (const execution of executions) {
    execution.result.figures.forEach((figure, index) => {
      const base64 = figure.dataBase64.replace(/\s+/g, '');
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(base64)) return;
      const png = new Uint8Array(Buffer.from(base64, 'base64'));
      if (!pngMagic.every((byte, position) => png[position] === byte)) return;
      figures.set(figureKey(execution.outputId, index), {
        png,
        base64,
        widthPx: figure.widthPx,
        heightPx: figure.heightPx,
      });
    });
  }
  return figures;
}
