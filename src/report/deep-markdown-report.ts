import { cleanOutputText } from '../trace/output-text.ts';
import {
  cancelledBeforeCompressing,
  deepOutcomePresentation,
  deepOutputAnchor,
  evidenceAnchor,
  linkCitations,
  offlineRulesText,
  placedVisual,
  sectionAnchor,
  subAnchor,
  subOutcomeText,
  unreadableFiles,
  unresearchedNote,
  unresearchedReasonText,
  visualsOfExecution,
} from './deep-run.ts';
import type { DeepVisual, PreparedDeepReport } from './deep-run.ts';
import type { ReportAsset } from './markdown-report.ts';
import {
  escapeMarkdownText,
  fencedBlock,
  neutralizeInlineMarkdown,
  neutralizeMarkdown,
} from './markdown-text.ts';
import { formatUtcTime } from './report-format.ts';

/**
 * `report.md` of a deep run: the HTML report's order in Markdown. Model text
 * (sections, claims, answers) stays Markdown but inert; plain text (questions,
 * table names) is escaped; figures and charts are PNG files under `assets/`,
 * each written once, with the section that cites it first or under its cell.
 * Anchors are `<a id>` elements of our own, so links work where the renderer
 * keeps ids.
 */

export interface DeepMarkdownReport {
  markdown: string;
  assets: ReportAsset[];
}

function anchor(id: string): string {
  return `<a id="${id}"></a>`;
}

function assetOf(report: PreparedDeepReport, visual: DeepVisual): ReportAsset | null {
  const bytes =
    visual.kind === 'chart' ? report.charts.get(visual.key)?.png : report.figures.get(visual.key)?.png;
  if (bytes === undefined || bytes === null) return null;
  return { path: `assets/${visual.key.replace(/[^A-Za-z0-9_-]/g, '_')}.png`, bytes };
}

function visualLine(report: PreparedDeepReport, visual: DeepVisual, assets: ReportAsset[]): string {
  const label = `${visual.kind === 'chart' ? 'Chart' : 'Figure'} ${visual.index + 1} of ${visual.subId}:${visual.outputId}`;
  const asset = assetOf(report, visual);
  if (asset === null) return `*${label}: not in the trace, or it could not be drawn.*`;
  assets.push(asset);
  return `${anchor(visual.anchor)}\n![${label}](${asset.path})`;
}

export function renderDeepMarkdownReport(report: PreparedDeepReport): DeepMarkdownReport {
  const { record } = report;
  const assets: ReportAsset[] = [];
  const outcome = deepOutcomePresentation(report);
  const out: string[] = [
    `# ${outcome.verdict === '' ? '' : `${outcome.verdict}: `}${escapeMarkdownText(record.question.trim().split('\n')[0] ?? 'Deep analysis')}`,
    '',
  ];
  if (outcome.happened !== null)
    out.push(
      `> **${outcome.verdict}. What happened:** ${escapeMarkdownText(outcome.happened)}${outcome.todo === null ? '' : `  \n> **What to do:** ${escapeMarkdownText(outcome.todo)}`}`,
      '',
    );
  if (record.model.offline)
    out.push(`> **No language model was used.** ${escapeMarkdownText(offlineRulesText(record))}`, '');
  out.push(
    `Run ${escapeMarkdownText(record.runId)} · started ${escapeMarkdownText(formatUtcTime(record.startedAt))} · ended **${escapeMarkdownText(record.termination.reason)}**: ${escapeMarkdownText(record.termination.detail)}`,
    '',
  );
  const unresearched = unresearchedNote(report);
  if (unresearched !== null)
    out.push(
      `> **${escapeMarkdownText(unresearched.headline)}** ${unresearched.reasons.map((reason) => unresearchedReasonText({ ...reason, text: escapeMarkdownText(reason.text) }, (flag) => `\`${flag}\``)).join(' ')}`,
      '',
    );
  if (report.summary !== null) {
    const { summary } = report;
    out.push(
      '## Summary',
      '',
      '**Key findings**',
      '',
      summary.markdown.trim() === ''
        ? '*No finding bears on what the question asks.*'
        : neutralizeMarkdown(summary.markdown, { demoteHeadings: 2 }),
      '',
    );
    if (summary.cannotAnswer.length > 0)
      out.push(
        '**What it could not answer**',
        '',
        ...summary.cannotAnswer.map((line) => `- ${neutralizeInlineMarkdown(line)}`),
        '',
      );
    if (summary.limits !== null) out.push(`*${neutralizeInlineMarkdown(summary.limits)}*`, '');
  }
  out.push('## Brief', '');
  if (record.brief === null) {
    out.push(
      record.ask === null
        ? '*The run wrote no brief.*'
        : `The analysis asked first: ${escapeMarkdownText(record.ask)}`,
      '',
    );
  } else {
    record.brief.questions.forEach((entry, index) => {
      const tables =
        entry.tables.length === 0 ? '' : ` (tables: ${entry.tables.map(escapeMarkdownText).join(', ')})`;
      const mark = report.unresearched.includes(index) ? ' — **not researched**' : '';
      out.push(`${index + 1}. ${escapeMarkdownText(entry.question)}${tables}${mark}`);
    });
    out.push('', `*A good answer:* ${escapeMarkdownText(record.brief.goodAnswer)}`, '');
  }
  const unread = unreadableFiles(report);
  if (unread.length > 0)
    out.push(
      '### Files that could not be read',
      '',
      `The workspace's profile could not read ${unread.length === 1 ? 'this file' : `these ${unread.length} files`}, so no sub-analysis saw ${unread.length === 1 ? 'it' : 'them'}.`,
      '',
      ...unread.map((file) => `- ${escapeMarkdownText(file.path)}: ${escapeMarkdownText(file.error)}`),
      '',
    );
  const known = new Set(record.evidence.map((item) => item.id));
  for (const view of report.sections) {
    out.push(anchor(sectionAnchor(view.section.id)), `## ${escapeMarkdownText(view.section.title)}`, '');
    if (view.section.error !== null)
      out.push(
        `*The writer failed for this section (${escapeMarkdownText(view.section.error)}); its evidence is listed instead.*`,
        '',
      );
    out.push(
      neutralizeMarkdown(linkCitations(view.section.markdown, known).markdown, { demoteHeadings: 2 }),
      '',
    );
    const unverified = view.html.numbers.filter((number) => !number.verified);
    if (unverified.length > 0)
      out.push(
        `*Not found in the outputs of its evidence:* ${unverified.map((number) => escapeMarkdownText(number.text)).join(', ')}`,
        '',
      );
    for (const visual of view.visuals) out.push(visualLine(report, visual, assets), '');
  }
  out.push('## Evidence', '');
  if (report.evidence.length === 0) {
    const stopped = cancelledBeforeCompressing(report);
    out.push(
      `*${escapeMarkdownText(stopped === null ? 'The evidence bank is empty.' : `No evidence was banked. ${stopped}`)}*`,
      '',
    );
  }
  for (const { item } of report.evidence) {
    const outputs = item.outputs.map((output) => `[${output}](#${deepOutputAnchor(output)})`).join(', ');
    const unverified = item.numbers
      .filter((number) => !number.verified)
      .map((number) => escapeMarkdownText(number.text));
    out.push(
      `- ${anchor(evidenceAnchor(item.id))}**${item.id}** ${neutralizeInlineMarkdown(item.claim)} — from [${item.subAnalysisId}](#${subAnchor(item.subAnalysisId)}), printed by ${outputs || 'no output'}${unverified.length === 0 ? '' : `; not found there: ${unverified.join(', ')}`}`,
    );
  }
  out.push('', '## Sub-analyses', '');
  for (const sub of report.subs) {
    const { record: entry } = sub;
    out.push(
      anchor(subAnchor(entry.id)),
      `### ${entry.id}: ${escapeMarkdownText(entry.question)}`,
      '',
      `- Outcome: **${escapeMarkdownText(subOutcomeText(entry))}**; rounds: ${sub.rounds ?? 'unknown'}`,
      `- ${escapeMarkdownText(entry.detail)}`,
      ...(entry.tables.length === 0 ? [] : [`- Tables: ${entry.tables.map(escapeMarkdownText).join(', ')}`]),
      '',
    );
    if (sub.executions.length === 0) {
      out.push(`*${escapeMarkdownText(sub.traceNote ?? 'It ran no cell.')}*`, '');
      continue;
    }
    out.push('<details><summary>Its cells</summary>', '');
    for (const execution of sub.executions) {
      const cited = `${entry.id}:${execution.outputId}`;
      out.push(
        anchor(deepOutputAnchor(cited)),
        `**${cited}** (${execution.result.status})`,
        '',
        fencedBlock(execution.code, 'python'),
        '',
      );
      const text = cleanOutputText(
        [
          execution.result.stdout.text,
          execution.result.error ? `${execution.result.error.name}: ${execution.result.error.value}` : '',
        ]
          .filter((part) => part !== '')
          .join('\n'),
      );
      if (text !== '') out.push(fencedBlock(text, 'text'), '');
      const visuals = visualsOfExecution(entry.id, execution);
      for (const visual of visuals) {
        const placed = placedVisual(report, visual);
        if (placed !== null)
          out.push(
            `*[${visual.kind === 'chart' ? 'Chart' : 'Figure'} ${visual.index + 1}](#${placed.anchor}) is shown with the section it supports.*`,
            '',
          );
        else out.push(visualLine(report, visual, assets), '');
      }
    }
    out.push('</details>', '');
  }
  out.push(
    '## Provenance',
    '',
    `- Model: ${escapeMarkdownText(record.model.id)}${record.model.offline ? ' (built-in offline analyst; no language model)' : ''}`,
    `- Sub-analyses at once: ${record.concurrency}`,
    `- Tokens: ${record.usage.promptTokens} prompt, ${record.usage.completionTokens} completion`,
    `- Started ${escapeMarkdownText(formatUtcTime(record.startedAt))}, ended ${escapeMarkdownText(record.endedAt === null ? 'unknown' : formatUtcTime(record.endedAt))}`,
    `- Rendered at ${escapeMarkdownText(formatUtcTime(report.generatedAt))}`,
    '',
  );
  return { markdown: out.join('\n'), assets };
}
