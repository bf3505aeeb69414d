import type { Table } from '../sandbox/cell-result.ts';
import type { ExecutionRecord, StepRecord } from '../trace/schema.ts';
import { tableToCsv } from './csv-export.ts';
import { escapeMarkdownText, fencedBlock, inlineCodeMarkdown, neutralizeMarkdown } from './markdown-text.ts';
import { cleanOutputText } from '../trace/output-text.ts';
import { chartKey, figureKey, missingVisualNote, outputAnchor } from './prepared-report.ts';
import type { PreparedReport } from './prepared-report.ts';
import {
  formatBytes,
  formatDuration,
  formatExactBytes,
  formatUtcTime,
  safeBaseUrl,
  stepLabel,
} from './report-format.ts';
import {
  durationFact,
  endedFact,
  inputFileWhen,
  inputsChanged,
  roundsFact,
  terminationFact,
  totalsScope,
} from './provenance-facts.ts';
import type { ProcessEntry } from './run-view.ts';
import { askerName, noAnswerText, stripCodeFence } from './run-view.ts';
import { madeBy } from './made-by.ts';
import { readingNotes } from './reading-notes.ts';
import { dataSectionMarkdown } from './data-section-markdown.ts';
import { outcomePresentation } from './outcome-look.ts';
import { rerunOfFacts } from './rerun-of.ts';
import { emptyGalleryNote } from './empty-gallery-note.ts';

/** A file the Markdown report links to, relative to the report's folder. */
export interface ReportAsset {
  path: string;
  bytes: Uint8Array | string;
}

export interface MarkdownReport {
  markdown: string;
  /** Chart and figure PNGs and table CSVs under `assets/`. */
  assets: ReportAsset[];
}

export interface MarkdownReportOptions {
  /** Characters of one output stream shown. Default 20 000. */
  maxOutputChars?: number;
  /** Artifacts that are images, shown in the figures section (paths under `artifacts/`). */
  artifactImages?: ReadonlySet<string>;
}

/** `report.md`: the same order as the HTML report, images and tables as files in `assets/`. */
export function renderMarkdownReport(
  report: PreparedReport,
  options: MarkdownReportOptions = {},
): MarkdownReport {
  const assets: ReportAsset[] = [];
  const maxOutputChars = options.maxOutputChars ?? 20_000;
  const { view } = report;
  const out: string[] = [];
  const instructionTitle = view.start.instruction.trim().split('\n')[0]?.trim() || 'Analysis';
  const outcome = outcomePresentation(view, report.audience);
  out.push(
    `# ${outcome.verdict === '' ? '' : `${outcome.verdict}: `}${escapeMarkdownText(instructionTitle.slice(0, 140))}`,
    '',
  );
  const made = madeBy(view);
  out.push(
    [
      `Run ${escapeMarkdownText(view.start.runId)}`,
      `started ${escapeMarkdownText(formatUtcTime(view.start.startedAt))}`,
      ...made.subtitle.map((part) => escapeMarkdownText(part)),
    ].join(' · '),
    '',
  );
  if (made.noModelNote !== null)
    out.push(`> **No language model was used.** ${escapeMarkdownText(made.noModelNote)}`, '');
  if (outcome.happened !== null)
    out.push(
      `> **${outcome.verdict}. What happened:** ${inlineCodeMarkdown(outcome.happened)}`,
      ...(outcome.todo === null ? [] : ['>', `> **What to do:** ${inlineCodeMarkdown(outcome.todo)}`]),
      '',
    );

  out.push(
    '## Instruction',
    '',
    ...view.start.instruction.split('\n').map((line) => `> ${escapeMarkdownText(line)}`),
    '',
  );

  if (report.turns.length > 1) {
    out.push('## Conversation', '');
    for (const { view: turn } of report.turns) {
      out.push(
        `### ${turn.replyToAsk ? 'Reply' : 'Question'} ${turn.turn}`,
        '',
        ...turn.question.split('\n').map((line) => `> ${escapeMarkdownText(line)}`),
        '',
      );
      if (turn.answer !== null) out.push(neutralizeMarkdown(turn.answer, { nestHeadingsUnder: 3 }), '');
      else if (turn.ask !== null)
        out.push(
          `**${askerName(view.start.model.offline)} asked:**`,
          '',
          neutralizeMarkdown(turn.ask, { nestHeadingsUnder: 3 }),
          '',
        );
      else out.push(`*${escapeMarkdownText(noAnswerText(turn.termination))}*`, '');
    }
  } else out.push('## Answer', '');
  if (report.turns.length > 1) {
    // The conversation above holds every answer.
  } else if (view.answer === null) {
    out.push('*The run produced no answer. The process below shows what was done.*', '');
  } else {
    const { checked, verified, unverified } = report.grounding;
    out.push(
      checked === 0
        ? '*The answer states no numbers that could be checked against the execution outputs.*'
        : `**Grounding: ${verified} of ${checked} numbers in the answer were found in the execution outputs${unverified > 0 ? `; ${unverified} unverified` : ''}.** See the table after the answer.`,
      '',
      neutralizeMarkdown(view.answer, { nestHeadingsUnder: 2 }),
      '',
    );
    const numbers = report.answer?.numbers ?? [];
    if (numbers.length > 0) {
      out.push(
        '### Numbers checked',
        '',
        '| Number | Status | Output | Printed as |',
        '| ---: | --- | --- | ---: |',
      );
      for (const number of numbers) {
        out.push(
          `| ${escapeMarkdownText(number.text)} | ${number.verified ? 'verified' : '**unverified**'} | ${number.outputId ? `[${escapeMarkdownText(number.outputId)}](#${outputAnchor(number.outputId)})` : ''} | ${escapeMarkdownText(number.matchedText ?? '')} |`,
        );
      }
      out.push('');
    }
  }

  out.push('## Figures and tables', '');
  let visuals = 0;
  for (const execution of view.executions) {
    execution.result.charts.forEach((_chart, index) => {
      const key = chartKey(execution.outputId, index);
      const chart = report.charts.get(key);
      if (!chart) return;
      visuals++;
      const caption = `Chart ${index + 1} of output ${escapeMarkdownText(execution.outputId)}`;
      if (chart.png) {
        assets.push({ path: `assets/${key}.png`, bytes: chart.png });
        out.push(
          `![${caption}](assets/${key}.png)`,
          '',
          `*${caption}*${chart.notes.map((note) => ` — ${escapeMarkdownText(note)}`).join('')}`,
          '',
        );
      } else {
        out.push(
          `> **${caption} could not be drawn:** ${escapeMarkdownText(chart.error ?? 'no image was made.')}`,
          '',
        );
      }
    });
    execution.result.figures.forEach((_figure, index) => {
      const key = figureKey(execution.outputId, index);
      const figure = report.figures.get(key);
      if (!figure) return;
      visuals++;
      assets.push({ path: `assets/${key}.png`, bytes: figure.png });
      out.push(
        `![Figure ${index + 1} of output ${escapeMarkdownText(execution.outputId)}](assets/${key}.png)`,
        '',
      );
    });
  }
  for (const artifact of view.artifacts) {
    if (!options.artifactImages?.has(artifact.path)) continue;
    visuals++;
    out.push(
      `![${escapeMarkdownText(artifact.path)}](${encodeRelativePath(`artifacts/${artifact.path}`)})`,
      '',
      `*File ${escapeMarkdownText(artifact.path)}*`,
      '',
    );
  }
  if (visuals === 0) out.push(`*${emptyGalleryNote(report, 0)}*`, '');

  out.push(...dataSectionMarkdown(view.profile));

  out.push('## Process', '');
  for (const entry of view.process) out.push(...renderEntry(entry, report, maxOutputChars, assets), '');

  out.push(...renderProvenance(report), '');
  return {
    markdown: `${out
      .join('\n')
      .replace(/\n{3,}/g, '\n\n')
      .trimEnd()}\n`,
    assets,
  };
}

function renderEntry(
  entry: ProcessEntry,
  report: PreparedReport,
  maxOutputChars: number,
  assets: ReportAsset[],
): string[] {
  switch (entry.kind) {
    case 'step':
      return [
        `### Round ${entry.step.round} · ${stepLabel[entry.step.kind]}${entry.step.closed ? '' : ' (unclosed)'}`,
        '',
        entry.step.kind === 'answer'
          ? '*The answer is shown at the top of this report.*'
          : neutralizeMarkdown(entry.step.text, { nestHeadingsUnder: 3 }),
      ];
    case 'turn':
      return [
        `### ${entry.turn.replyToAsk ? 'Reply' : 'Question'} ${entry.turn.turn}: ${escapeMarkdownText(entry.turn.question.split('\n')[0] ?? '')}`,
      ];
    case 'notice':
      return [
        `### ${entry.beforeRounds === true ? 'Before the first round' : `Round ${entry.notice.round}`} · Notice (${escapeMarkdownText(entry.notice.kind)})`,
        '',
        escapeMarkdownText(entry.notice.text),
      ];
    case 'cell':
      return renderCell(entry.step, entry.execution, report, maxOutputChars, assets);
  }
}

function renderCell(
  step: StepRecord | null,
  execution: ExecutionRecord | null,
  report: PreparedReport,
  maxOutputChars: number,
  assets: ReportAsset[],
): string[] {
  const round = execution?.round ?? step?.round ?? 0;
  const code = execution?.code ?? stripCodeFence(step?.text ?? '');
  if (!execution) return [`### Round ${round} · Code (not executed)`, '', fencedBlock(code, 'python')];
  const { result, outputId } = execution;
  const lines = [
    `### Round ${round} · Code → ${escapeMarkdownText(outputId)} (${result.status}, ${formatDuration(result.durationMs)})`,
    '',
    fencedBlock(code, 'python'),
    '',
    `<a id="${outputAnchor(outputId)}"></a>**Output ${escapeMarkdownText(outputId)}**`,
    '',
  ];
  if (result.statusDetail) lines.push(`*${escapeMarkdownText(result.statusDetail)}*`, '');
  const streams: Array<[string, string]> = [
    ['stdout', result.stdout.text],
    ['stderr', result.stderr.text],
    ['error', result.error ? `${result.error.name}: ${result.error.value}\n${result.error.traceback}` : ''],
    ['value', result.value ?? ''],
  ];
  for (const [name, text] of streams) {
    if (text === '') continue;
    const cleaned = cleanOutputText(text);
    const shown =
      cleaned.length > maxOutputChars
        ? `${cleaned.slice(0, maxOutputChars)}\n… (shortened; trace.json has it all)`
        : cleaned;
    lines.push(name === 'stdout' ? '' : `*${name}:*`, '', fencedBlock(shown, 'text'), '');
  }
  result.tables.forEach((table, index) => {
    const path = `assets/${outputId.replace(/[^A-Za-z0-9_-]/g, '_')}-table-${index + 1}.csv`;
    assets.push({ path, bytes: tableToCsv(table) });
    lines.push(
      ...markdownTable(table),
      '',
      `*Table ${index + 1} of ${escapeMarkdownText(outputId)}${table.truncated ? ` (first ${table.rows.length} of ${table.totalRows} rows)` : ''} — [CSV](${path})*`,
      '',
    );
  });
  // Link only assets that exist: an omitted or invalid visual gets a note instead.
  result.charts.forEach((chart, index) =>
    lines.push(
      report.charts.get(chartKey(outputId, index))?.png
        ? `*Chart ${index + 1}: see [Figures and tables](#figures-and-tables) (assets/${chartKey(outputId, index)}.png).*`
        : `*${escapeMarkdownText(missingVisualNote(chart, `Chart ${index + 1} of output ${outputId}`))}*`,
      '',
    ),
  );
  result.figures.forEach((figure, index) =>
    lines.push(
      report.figures.has(figureKey(outputId, index))
        ? `![Figure ${index + 1} of output ${escapeMarkdownText(outputId)}](assets/${figureKey(outputId, index)}.png)`
        : `*${escapeMarkdownText(missingVisualNote(figure, `Figure ${index + 1} of output ${outputId}`))}*`,
      '',
    ),
  );
  return lines;
}

function markdownTable(table: Table): string[] {
  const maxRows = 30;
  const header = `| | ${table.columns.map(escapeMarkdownText).join(' | ')} |`;
  const rule = `| --- | ${table.columns.map(() => '---:').join(' | ')} |`;
  const rows = table.rows
    .slice(0, maxRows)
    .map(
      (row, rowIndex) =>
        `| ${escapeMarkdownText(table.index[rowIndex] ?? '')} | ${row.map((cell) => escapeMarkdownText(cell === null ? '' : String(cell))).join(' | ')} |`,
    );
  return [header, rule, ...rows];
}

function renderProvenance(report: PreparedReport): string[] {
  const { view } = report;
  const { start } = view;
  const termination = terminationFact(view);
  const lines = [
    '## Provenance',
    '',
    `- **Model:** ${escapeMarkdownText(start.model.id)}${start.model.offline ? ' (built-in offline analyst; no language model)' : ''}, profile ${start.model.profile}, endpoint ${escapeMarkdownText(safeBaseUrl(start.model.baseUrl) ?? 'none')}`,
    `- **${termination[0]}:** ${escapeMarkdownText(termination[1])}`,
    `- **Rounds:** ${roundsFact(view)}`,
    `- **Tokens:** ${view.usage.promptTokens} prompt, ${view.usage.completionTokens} completion`,
    `- **Duration:** ${durationFact(view)}; cells ${formatDuration(view.executions.reduce((total, execution) => total + execution.result.durationMs, 0))}; model ${formatDuration(view.modelTurns.reduce((total, turn) => total + turn.durationMs, 0))}${totalsScope(view)}`,
    `- **Limits:** cell timeout ${formatDuration(start.limits.cellTimeoutMs)}, memory ${start.limits.memoryMb} MB, ${start.limits.cpus} CPU, deadline ${start.limits.deadlineMs === null ? 'none' : formatDuration(start.limits.deadlineMs)}, context budget ${start.limits.contextBudgetTokens} tokens`,
    `- **Tool versions:** ${report.toolVersions.map(([name, version]) => `${name} ${escapeMarkdownText(version)}`).join(', ')}`,
    `- **Run:** ${escapeMarkdownText(start.runId)}, started ${escapeMarkdownText(formatUtcTime(start.startedAt))}, ended ${escapeMarkdownText(endedFact(view))}; report rendered ${escapeMarkdownText(formatUtcTime(report.generatedAt))}`,
  ];
  const rerunOf = rerunOfFacts(start);
  if (rerunOf !== null)
    lines.push(
      `- **Re-run of:** run ${escapeMarkdownText(rerunOf.runId)} (folder ${escapeMarkdownText(rerunOf.folderName)}), trace SHA-256 \`${rerunOf.traceSha256}\`; its recorded cells were run again on the input files below, with no model asked for code`,
    );
  lines.push('', '### Input files', '');
  if (view.inputFiles.length === 0) lines.push('*No input files were recorded.*');
  else if (!inputsChanged(view)) {
    lines.push('| File | Size | SHA-256 |', '| --- | ---: | --- |');
    for (const file of view.inputFiles)
      lines.push(
        `| ${escapeMarkdownText(file.path)} | ${formatExactBytes(file.sizeBytes)} | \`${file.sha256}\` |`,
      );
  } else {
    // A thread whose workspace changed: every version of its inputs, each with when it came.
    lines.push('| File | Size | When | SHA-256 |', '| --- | ---: | --- | --- |');
    for (const file of view.inputFiles)
      lines.push(
        `| ${escapeMarkdownText(file.path)} | ${formatExactBytes(file.sizeBytes)} | ${inputFileWhen(file)} | \`${file.sha256}\` |`,
      );
  }
  const reading = readingNotes(view.profile);
  if (reading.length > 0) {
    lines.push('', '### How the files were read', '');
    for (const { file, note } of reading)
      lines.push(`- ${escapeMarkdownText(file)}: ${escapeMarkdownText(note)}`);
  }
  if (view.artifacts.length > 0) {
    lines.push(
      '',
      '### Files the code wrote',
      '',
      '| File | Size | Output | SHA-256 |',
      '| --- | ---: | --- | --- |',
    );
    for (const artifact of view.artifacts) {
      lines.push(
        `| [${escapeMarkdownText(artifact.path)}](${encodeRelativePath(`artifacts/${artifact.path}`)}) | ${formatBytes(artifact.sizeBytes)} | ${escapeMarkdownText(artifact.outputId ?? '')} | \`${escapeMarkdownText(artifact.sha256)}\` |`,
      );
    }
  }
  return lines;
}

function encodeRelativePath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}
