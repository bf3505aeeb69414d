import type { ExecutionRecord, StepRecord } from '../trace/schema.ts';
import { escapeHtml } from './html-escape.ts';
import { escapeMarkdownText, neutralizeInlineMarkdown, neutralizeMarkdown } from './markdown-text.ts';
import { cleanOutputText } from '../trace/output-text.ts';
import { chartKey, figureKey, missingVisualNote } from './prepared-report.ts';
import type { PreparedReport } from './prepared-report.ts';
import { notebookSchema } from './notebook-schema.ts';
import { outcomePresentation } from './outcome-look.ts';
import type { Notebook, NotebookCell, NotebookOutput } from './notebook-schema.ts';
import { stripCodeFence } from './run-view.ts';

/**
 * `analysis.ipynb`: the run's code cells in order, with the outputs they had,
 * between markdown cells holding the model's reasoning. Run top to bottom in
 * a folder that holds a copy of the workspace, it redoes the analysis:
 * cells that failed in the run are tagged `raises-exception` (execution goes
 * on past them, as the run did) and cells that timed out, ran out of memory
 * or crashed are tagged `skip-execution`, nbclient's tag for cells to leave
 * alone, so that the notebook neither hangs nor kills its kernel.
 */
export function renderNotebook(report: PreparedReport): Notebook {
  const { view } = report;
  const cells: NotebookCell[] = [];
  const ids = new CellIds();
  // The same "Failed: " or "No data: " before the title as the Markdown and HTML reports'.
  const { verdict, happened } = outcomePresentation(view);
  const intro = [
    `# ${verdict === '' ? '' : `${verdict}: `}${firstLine(view.start.instruction)}`,
    '',
    `Datalyst run \`${view.start.runId}\`, ${view.start.model.offline ? 'made by the built-in offline analyst (no language model was used)' : `model \`${view.start.model.id}\``}.`,
    '',
    'Run this notebook in a folder that holds a copy of the workspace: the cells read the input files by their relative paths and write next to them, as they did in the run.',
    '',
    '## Instruction',
    '',
    neutralizeMarkdown(view.start.instruction),
  ];
  // Plain text built from file names and readers' errors: escaped, as report.md does, never live Markdown.
  if (happened !== null) intro.push('', `**${escapeMarkdownText(happened)}**`);
  cells.push(markdownCell(ids.next('intro'), intro.join('\n')));
  let executionCount = 1;
  cells.push(setupCell(ids.next('datalyst-setup'), executionCount));
  // A one-question run's answer closes the notebook under "## Answer"; its step in the process is the same text.
  const closingAnswer = view.turns.length <= 1 ? view.answer : null;
  for (const entry of view.process) {
    if (entry.kind === 'notice') continue;
    if (entry.kind === 'turn') {
      const label = entry.turn.replyToAsk ? 'Reply' : 'Question';
      cells.push(
        markdownCell(
          ids.next(`turn-${entry.turn.turn}`),
          `## ${label} ${entry.turn.turn}\n\n${neutralizeMarkdown(entry.turn.question)}`,
        ),
      );
      continue;
    }
    if (entry.kind === 'step') {
      if (entry.step.kind === 'text' || entry.step.text.trim() === '') continue;
      if (isSameAnswer(entry.step, closingAnswer)) continue;
      cells.push(
        markdownCell(
          ids.next(entry.step.kind),
          `**${stepTitle(entry.step)}** (round ${entry.step.round})\n\n${neutralizeMarkdown(entry.step.text)}`,
        ),
      );
      continue;
    }
    const { execution, step } = entry;
    if (!execution) {
      cells.push(unexecutedCell(ids.next('code'), step?.text ?? ''));
      continue;
    }
    const executed = executionCells(execution, ids, executionCount, report);
    executionCount = executed.count;
    cells.push(...executed.cells);
  }
  // A thread's answers are in the process, each after its question's cells.
  if (closingAnswer !== null)
    cells.push(markdownCell(ids.next('answer'), `## Answer\n\n${neutralizeMarkdown(closingAnswer)}`));
  return notebookDocument(cells, {
    runId: view.start.runId,
    model: view.start.model.id,
    offline: view.start.model.offline,
    generatedAt: report.generatedAt,
  });
}

/** Whether a step is the answer that the notebook shows once, under a heading of its own. */
export function isSameAnswer(step: StepRecord, answer: string | null): boolean {
  return step.kind === 'answer' && answer !== null && step.text.trim() === answer.trim();
}

/** The nbformat 4.5 document around the cells, checked: a notebook Jupyter refuses to open is a bug worth failing on. */
export function notebookDocument(cells: NotebookCell[], datalyst: Record<string, unknown>): Notebook {
  const notebook: Notebook = {
    nbformat: 4,
    nbformat_minor: 5,
    metadata: {
      kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' },
      language_info: { name: 'python' },
      datalyst,
    },
    cells,
  };
  return notebookSchema.parse(notebook);
}

/** The first code cell: Jupyter set up to print like the run's kernel. */
export function setupCell(id: string, executionCount: number): NotebookCell {
  return {
    ...codeCell(id, kernelSetupCode, executionCount, []),
    metadata: { datalyst: { setup: true } },
  };
}

/** A `<Code>` block that never ran: kept as code, never executed. */
export function unexecutedCell(id: string, stepText: string): NotebookCell {
  return {
    ...codeCell(id, stripCodeFence(stepText), null, []),
    metadata: { tags: ['skip-execution'], datalyst: { executed: false } },
  };
}

/** Where an execution's figures and charts are found (a run's prepared report, or one sub-analysis's share of a deep report's). */
export type NotebookVisuals = Pick<PreparedReport, 'charts' | 'figures'>;

/**
 * An executed cell with the outputs it had, tagged as it ended (`raises-exception`,
 * or `skip-execution` and a note for a timeout, memory, crash or cancel);
 * `count` is the last execution count used, returned advanced.
 */
export function executionCells(
  execution: ExecutionRecord,
  ids: CellIds,
  count: number,
  visuals: NotebookVisuals,
  idBase: string = execution.outputId,
): { cells: NotebookCell[]; count: number } {
  const cells: NotebookCell[] = [];
  const skip = ['timeout', 'memory', 'crashed', 'cancelled'].includes(execution.result.status);
  const executionCount = skip ? null : count + 1;
  const tags = skip ? ['skip-execution'] : execution.result.status === 'error' ? ['raises-exception'] : [];
  const cell = codeCell(
    ids.next(idBase),
    execution.code,
    executionCount,
    notebookOutputs(execution, executionCount, visuals),
  );
  cells.push({
    ...cell,
    metadata: {
      ...(tags.length > 0 ? { tags } : {}),
      datalyst: { outputId: execution.outputId, status: execution.result.status, round: execution.round },
    },
  });
  if (skip) {
    cells.push(
      markdownCell(
        ids.next('note'),
        `*The cell above is not re-run: in the run it ended with \`${execution.result.status}\`${execution.result.statusDetail ? ` (${neutralizeInlineMarkdown(execution.result.statusDetail)})` : ''}.*`,
      ),
    );
  }
  return { cells, count: executionCount ?? count };
}

/**
 * The run's kernel is a plain Python process, not IPython: pandas fits wide
 * frames to the 80-column console (`display.max_columns` 0 instead of
 * IPython's 20) and matplotlib draws off-screen. The first cell sets the
 * same, so that the notebook prints what the run printed; `%matplotlib
 * inline` shows the figures that the run captured. Altair's default
 * renderer adds HTML that loads vega from a CDN, so a re-run chart would be
 * blank offline: the `mimetype` renderer (Altair 4 and 5, Debian trixie has
 * 5.0) outputs only the vega-lite spec, as the recorded outputs have it,
 * which JupyterLab, VS Code and nbviewer draw with their own vega.
 */
const kernelSetupCode = [
  "# Datalyst: make Jupyter print like the run's kernel (a plain Python process).",
  '%matplotlib inline',
  'import pandas as pd',
  "pd.set_option('display.max_columns', 0)",
  'try:',
  '    import altair as alt',
  '    # Charts as the vega-lite spec, drawn offline, not HTML that loads vega from a CDN.',
  "    alt.renderers.enable('mimetype')",
  'except ImportError:',
  '    pass',
].join('\n');

function notebookOutputs(
  execution: ExecutionRecord,
  count: number | null,
  report: NotebookVisuals,
): NotebookOutput[] {
  const { result, outputId } = execution;
  const outputs: NotebookOutput[] = [];
  if (result.stdout.text !== '')
    outputs.push({ output_type: 'stream', name: 'stdout', text: lines(cleanOutputText(result.stdout.text)) });
  if (result.stderr.text !== '')
    outputs.push({ output_type: 'stream', name: 'stderr', text: lines(cleanOutputText(result.stderr.text)) });
  result.figures.forEach((traced, index) => {
    const figure = report.figures.get(figureKey(outputId, index));
    if (!figure) {
      const note = missingVisualNote(traced, `Figure ${index + 1} of output ${outputId}`);
      outputs.push({ output_type: 'display_data', data: { 'text/plain': [note] }, metadata: {} });
    } else
      outputs.push({
        output_type: 'display_data',
        data: {
          'image/png': figure.base64,
          'text/plain': [`<Figure size ${figure.widthPx}x${figure.heightPx}>`],
        },
        metadata: {},
      });
  });
  result.charts.forEach((chart, index) => {
    const rendered = report.charts.get(chartKey(outputId, index));
    const data: Record<string, string | string[] | Record<string, unknown>> = {
      'text/plain': ['<VegaLite chart>'],
    };
    const spec = rendered?.vegaLiteSpec ?? null;
    if (spec !== null) data[vegaLiteMimeType(spec)] = spec;
    if (rendered?.png) data['image/png'] = Buffer.from(rendered.png).toString('base64');
    if (spec === null && !rendered?.png)
      data['text/plain'] = [
        rendered === undefined
          ? missingVisualNote(chart, `Chart ${index + 1} of output ${outputId}`)
          : `Chart ${chart.id} could not be drawn: ${rendered.error ?? 'unknown error'}`,
      ];
    outputs.push({ output_type: 'display_data', data, metadata: {} });
  });
  if (result.value === null) {
    for (const table of result.tables) {
      const header = `<tr><th></th>${table.columns.map((column) => `<th>${escapeHtml(column)}</th>`).join('')}</tr>`;
      const body = table.rows
        .map(
          (row, rowIndex) =>
            `<tr><th>${escapeHtml(table.index[rowIndex] ?? '')}</th>${row.map((cell) => `<td>${escapeHtml(String(cell ?? ''))}</td>`).join('')}</tr>`,
        )
        .join('');
      outputs.push({
        output_type: 'display_data',
        data: {
          'text/html': [`<table>${header}${body}</table>`],
          'text/plain': [`<table ${table.id}: ${table.totalRows} rows x ${table.totalColumns} columns>`],
        },
        metadata: {},
      });
    }
  } else {
    outputs.push({
      output_type: 'execute_result',
      execution_count: count,
      data: { 'text/plain': lines(cleanOutputText(result.value)) },
      metadata: {},
    });
  }
  if (result.error) {
    outputs.push({
      output_type: 'error',
      ename: result.error.name,
      evalue: result.error.value,
      traceback: cleanOutputText(result.error.traceback).split('\n'),
    });
  }
  return outputs;
}

function vegaLiteMimeType(spec: Record<string, unknown>): string {
  const major = /vega-lite\/v(\d+)/.exec(typeof spec.$schema === 'string' ? spec.$schema : '')?.[1];
  return `application/vnd.vegalite.v${major ?? '5'}+json`;
}

function codeCell(
  id: string,
  code: string,
  count: number | null,
  outputs: NotebookOutput[],
): Extract<NotebookCell, { cell_type: 'code' }> {
  return { id, cell_type: 'code', metadata: {}, source: lines(code), execution_count: count, outputs };
}

export function markdownCell(id: string, source: string): NotebookCell {
  return { id, cell_type: 'markdown', metadata: {}, source: lines(source) };
}

/** nbformat's multiline strings: lines that keep their newline, the last one without. */
function lines(text: string): string[] {
  return text.split(/(?<=\n)/);
}

function stepTitle(step: StepRecord): string {
  return step.kind.charAt(0).toUpperCase() + step.kind.slice(1);
}

export function firstLine(text: string): string {
  return neutralizeInlineMarkdown(text.trim().split('\n')[0]?.trim().slice(0, 140) || 'Analysis');
}

/** Stable, readable, unique ids: `E3`, `analyze-2`, ... */
export class CellIds {
  private readonly used = new Set<string>();

  next(base: string): string {
    const clean = base.replace(/[^a-zA-Z0-9_-]/g, '-').slice(0, 48) || 'cell';
    let id = clean;
    for (let suffix = 2; this.used.has(id); suffix++) id = `${clean}-${suffix}`;
    this.used.add(id);
    return id;
  }
}
