import type { EvidenceItem } from '../deep/deep-schema.ts';
import { subOutcomeText } from './deep-run.ts';
import type { DeepSubView, PreparedDeepReport } from './deep-run.ts';
import { neutralizeInlineMarkdown, neutralizeMarkdown } from './markdown-text.ts';
import type { Notebook, NotebookCell } from './notebook-schema.ts';
import {
  CellIds,
  executionCells,
  firstLine,
  isSameAnswer,
  markdownCell,
  notebookDocument,
  setupCell,
  unexecutedCell,
  type NotebookVisuals,
} from './notebook.ts';
import type { PreparedFigure } from './prepared-report.ts';
import type { RenderedChart } from './rendered-chart.ts';
import { buildRunView } from './run-view.ts';

/**
 * A deep analysis's `analysis.ipynb`: the brief, then each written section
 * as markdown with the evidence it cites (each claim with its outputs,
 * `S1:E4`), then every sub-analysis under a heading of its own with its
 * reasoning and its code cells, outputs as they were. The sub-analyses ran
 * in kernels of their own; run top to bottom here they share one, in a
 * folder holding a copy of the workspace (each loads what it reads).
 * Cells are tagged as in the single run's notebook (`notebook.ts`).
 */
export function renderDeepNotebook(report: PreparedDeepReport): Notebook {
  const { record } = report;
  const ids = new CellIds();
  const cells: NotebookCell[] = [];
  const intro = [
    `# ${firstLine(record.question)}`,
    '',
    `Datalyst deep analysis \`${record.runId}\`, ${record.model.offline ? 'made by the built-in offline analyst (no language model was used)' : `model \`${record.model.id}\``}.`,
    '',
    `It ended **${record.termination.reason}**: ${neutralizeInlineMarkdown(record.termination.detail)}`,
    '',
    'The sections below cite evidence (`EV1`…); each evidence item cites the outputs of a sub-analysis (`S1:E4`: output E4 of sub-analysis S1), whose cells follow under "Sub-analyses". Each sub-analysis ran in a kernel of its own; run this notebook in a folder that holds a copy of the workspace.',
  ];
  cells.push(markdownCell(ids.next('intro'), intro.join('\n')));

  if (record.brief !== null) {
    const brief = [
      '## Brief',
      '',
      ...record.brief.questions.map(
        (entry, index) =>
          `${index + 1}. ${neutralizeInlineMarkdown(entry.question)}${entry.tables.length > 0 ? ` (tables: ${entry.tables.map((table) => neutralizeInlineMarkdown(table)).join(', ')})` : ''}`,
      ),
    ];
    if (record.brief.goodAnswer.trim() !== '')
      brief.push('', `**A good answer:** ${neutralizeInlineMarkdown(record.brief.goodAnswer)}`);
    cells.push(markdownCell(ids.next('brief'), brief.join('\n')));
  }
  if (record.ask !== null)
    cells.push(markdownCell(ids.next('ask'), `## Question to the user\n\n${neutralizeMarkdown(record.ask)}`));

  const evidenceById = new Map(record.evidence.map((item) => [item.id, item]));
  for (const view of report.sections) {
    const { section } = view;
    const text = [`## ${neutralizeInlineMarkdown(section.title)}`, ''];
    if (section.error !== null)
      text.push(`*Not written by the writer: ${neutralizeInlineMarkdown(section.error)}*`, '');
    text.push(neutralizeMarkdown(section.markdown, { demoteHeadings: 2 }));
    const cited = view.evidenceIds.flatMap((id) => evidenceById.get(id) ?? []);
    if (cited.length > 0) text.push('', '**Evidence**', '', ...cited.map(evidenceLine));
    cells.push(markdownCell(ids.next(section.id), text.join('\n')));
  }
  const uncited = record.evidence.filter(
    (item) => !report.sections.some((view) => view.evidenceIds.includes(item.id)),
  );
  if (uncited.length > 0)
    cells.push(
      markdownCell(
        ids.next('evidence-uncited'),
        ['## Evidence no section cites', '', ...uncited.map(evidenceLine)].join('\n'),
      ),
    );

  cells.push(markdownCell(ids.next('sub-analyses'), '# Sub-analyses'));
  let count = 1;
  cells.push(setupCell(ids.next('datalyst-setup'), count));
  for (const sub of report.subs) count = subAnalysisCells(sub, report, ids, cells, count);

  return notebookDocument(cells, {
    runId: record.runId,
    model: record.model.id,
    offline: record.model.offline,
    deep: true,
    generatedAt: report.generatedAt,
  });
}

/** `- **EV3** (S1:E4): the claim`, unverified numbers named. */
function evidenceLine(item: EvidenceItem): string {
  const unverified = item.numbers.filter((number) => !number.verified).map((number) => number.text);
  const outputs = item.outputs.length > 0 ? ` (${item.outputs.join(', ')})` : '';
  const flag =
    unverified.length > 0
      ? ` *(not found in its outputs: ${unverified.map((text) => neutralizeInlineMarkdown(text)).join(', ')})*`
      : '';
  return `- **${item.id}**${outputs}: ${neutralizeInlineMarkdown(item.claim)}${flag}`;
}

/** One sub-analysis: its heading, its outcome, its reasoning and cells. Returns the last execution count used. */
function subAnalysisCells(
  sub: DeepSubView,
  report: PreparedDeepReport,
  ids: CellIds,
  cells: NotebookCell[],
  count: number,
): number {
  const { record } = sub;
  const heading = [
    `## ${record.id}: ${neutralizeInlineMarkdown(record.question)}`,
    '',
    `Outcome: **${neutralizeInlineMarkdown(subOutcomeText(record))}**. ${neutralizeInlineMarkdown(record.detail)}`,
  ];
  if (record.evidenceIds.length > 0) heading.push('', `Evidence: ${record.evidenceIds.join(', ')}.`);
  if (sub.traceNote !== null) heading.push('', `*${neutralizeInlineMarkdown(sub.traceNote)}*`);
  cells.push(markdownCell(ids.next(`${record.id}-heading`), heading.join('\n')));
  if (sub.records === null) return count;
  const visuals = visualsOf(report, record.id);
  let last = count;
  for (const entry of buildRunView(sub.records).process) {
    if (entry.kind === 'notice' || entry.kind === 'turn') continue;
    if (entry.kind === 'step') {
      if (entry.step.kind === 'text' || entry.step.text.trim() === '') continue;
      // The sub-analysis's answer follows its cells under "Answer of S1": once.
      if (isSameAnswer(entry.step, record.answer)) continue;
      const title = entry.step.kind.charAt(0).toUpperCase() + entry.step.kind.slice(1);
      cells.push(
        markdownCell(
          ids.next(`${record.id}-${entry.step.kind}`),
          `**${title}** (${record.id}, round ${entry.step.round})\n\n${neutralizeMarkdown(entry.step.text)}`,
        ),
      );
      continue;
    }
    if (entry.execution === null) {
      cells.push(unexecutedCell(ids.next(`${record.id}-code`), entry.step?.text ?? ''));
      continue;
    }
    const executed = executionCells(
      entry.execution,
      ids,
      last,
      visuals,
      `${record.id}-${entry.execution.outputId}`,
    );
    last = executed.count;
    cells.push(...executed.cells);
  }
  if (record.answer !== null)
    cells.push(
      markdownCell(
        ids.next(`${record.id}-answer`),
        `**Answer of ${record.id}**\n\n${neutralizeMarkdown(record.answer)}`,
      ),
    );
  return last;
}

/** One sub-analysis's charts and figures, keyed as a single run's (`E3-chart-1`). */
function visualsOf(report: PreparedDeepReport, subId: string): NotebookVisuals {
  const prefix = `${subId}:`;
  const own = <T>(map: ReadonlyMap<string, T>): Map<string, T> =>
    new Map(
      [...map]
        .filter(([key]) => key.startsWith(prefix))
        .map(([key, value]) => [key.slice(prefix.length), value]),
    );
  return {
    charts: own<RenderedChart>(report.charts),
    figures: own<PreparedFigure>(report.figures),
  };
}
