import type { ExecutionRecord } from '../trace/schema.ts';
import { cleanOutputText } from '../trace/output-text.ts';
import {
  cancelledBeforeCompressing,
  deepOutcomePresentation,
  deepOutputAnchor,
  evidenceAnchor,
  offlineRulesText,
  placedVisual,
  sectionAnchor,
  subAnchor,
  unreadableFiles,
  unresearchedNote,
  unresearchedReasonText,
  visualsOfExecution,
} from './deep-run.ts';
import type { DeepSubView, DeepVisual, PreparedDeepReport } from './deep-run.ts';
import type { OutcomePresentation } from './outcome-look.ts';
import { deepReportStyles } from './deep-report-styles.ts';
import { escapeHtml } from './html-escape.ts';
import { renderDataTable } from './html-table.ts';
import { contentsBar, reportDocumentHead, timeHtml } from './html-report.ts';
import { highlightPython } from './python-highlighter.ts';
import { formatDuration } from './report-format.ts';
import { renderSafeMarkdown } from './safe-markdown.ts';
import { plural } from '../util/plural.ts';

/**
 * The deep analysis's report as one self-contained HTML page: the question
 * and how the run ended, the brief, the written sections (each `[EV3]` a link
 * to its evidence, each number marked verified or not against the outputs of
 * the evidence the section cites, the figures it cites placed with it), the
 * evidence bank (each item linked to the sub-analysis outputs that printed
 * it), then every sub-analysis (question, outcome, rounds; its cells folded)
 * and the run's facts. The same policy as the single report: no script,
 * nothing fetched, every model and data text escaped.
 */

export interface DeepHtmlOptions {
  /** Characters of one output stream shown. Default 20 000 (the sub-run's trace has it all). */
  maxOutputChars?: number;
}

const outcomeLabels: Record<string, string> = {
  answered: 'answered',
  incomplete: 'incomplete: it ended without an answer; what it printed is still evidence',
  failed: 'failed',
  cancelled: 'cancelled',
  skipped: 'skipped: never started',
};

/** A fact's value: plain text, or a recorded time (shown as a person reads it, the ISO value kept in `<time>`). */
type Fact = string | { time: string };

function factList(facts: ReadonlyArray<readonly [string, Fact]>): string {
  return `<dl class="facts">${facts.map(([name, value]) => `<dt>${escapeHtml(name)}</dt><dd>${typeof value === 'string' ? escapeHtml(value) : timeHtml(value.time)}</dd>`).join('')}</dl>`;
}

function firstLine(text: string, maxChars: number): string {
  const line = text.trim().split('\n')[0]?.trim() ?? '';
  return line.length > maxChars ? `${line.slice(0, maxChars - 1)}…` : line || 'Deep analysis';
}

function visualTarget(report: PreparedDeepReport, visual: DeepVisual): string {
  return placedVisual(report, visual)?.anchor ?? deepOutputAnchor(`${visual.subId}:${visual.outputId}`);
}

function visualLabel(visual: DeepVisual): string {
  return `${visual.kind === 'chart' ? 'Chart' : 'Figure'} ${visual.index + 1} of ${visual.subId}:${visual.outputId}`;
}

/** A visual drawn in full; null when the trace holds no drawable form of it. */
function renderVisual(report: PreparedDeepReport, visual: DeepVisual, id: string | null): string | null {
  const idAttribute = id === null ? '' : ` id="${escapeHtml(id)}"`;
  const caption = `<figcaption>${escapeHtml(visualLabel(visual))}, printed by <a href="#${escapeHtml(deepOutputAnchor(`${visual.subId}:${visual.outputId}`))}">${escapeHtml(`${visual.subId}:${visual.outputId}`)}</a></figcaption>`;
  if (visual.kind === 'chart') {
    const chart = report.charts.get(visual.key);
    if (chart === undefined) return null;
    if (chart.svg === null)
      return `<figure class="chart chart-failed"${idAttribute}><div class="chart-error" role="alert"><strong>This chart could not be drawn.</strong> ${escapeHtml(chart.error ?? 'Unknown error.')}</div>${caption}</figure>`;
    const notes = chart.notes.map((note) => `<p class="note">${escapeHtml(note)}</p>`).join('');
    return `<figure class="chart"${idAttribute}>${chart.svg}${caption}${notes}</figure>`;
  }
  const figure = report.figures.get(visual.key);
  if (figure === undefined) return null;
  return `<figure class="figure"${idAttribute}><img src="data:image/png;base64,${figure.base64}" width="${figure.widthPx}" height="${figure.heightPx}" alt="${escapeHtml(visualLabel(visual))}">${caption}</figure>`;
}

function renderHeader(report: PreparedDeepReport, outcome: OutcomePresentation): string {
  const { record } = report;
  const banners: string[] = [];
  if (outcome.happened !== null)
    banners.push(
      `<div class="banner banner-outcome banner-${outcome.look}" role="alert"><p><strong>What happened.</strong> ${escapeHtml(outcome.happened)}</p>${outcome.todo === null ? '' : `<p><strong>What to do.</strong> ${escapeHtml(outcome.todo)}</p>`}</div>`,
    );
  if (record.model.offline)
    banners.push(
      `<div class="banner banner-offline" role="note"><strong>No language model was used.</strong> ${escapeHtml(offlineRulesText(record))}</div>`,
    );
  const unresearched = unresearchedNote(report);
  if (unresearched !== null)
    banners.push(
      `<div class="banner banner-unresearched" role="note"><strong>${escapeHtml(unresearched.headline)}</strong> ${unresearched.reasons.map((reason) => unresearchedReasonText({ ...reason, text: escapeHtml(reason.text) }, (flag) => `<code>${escapeHtml(flag)}</code>`)).join(' ')}</div>`,
    );
  // Written from the evidence, but after the budget ran out: said, though it is no failure.
  if (record.termination.reason === 'max-sub-analyses')
    banners.push(
      `<div class="banner banner-outcome" role="alert"><strong>Ended: ${escapeHtml(record.termination.reason)}.</strong> ${escapeHtml(record.termination.detail)}</div>`,
    );
  const counts = [
    escapeHtml(`Run ${record.runId}`),
    `started ${timeHtml(record.startedAt)}`,
    escapeHtml(record.model.offline ? 'offline analyst' : `model ${record.model.id}`),
    escapeHtml(plural(record.subAnalyses.length, 'sub-analysis', 'sub-analyses')),
    escapeHtml(plural(record.evidence.length, 'evidence item')),
  ];
  const verdict = outcome.verdict === '' ? 'Answered' : outcome.verdict;
  return `<header id="top" class="band band-${outcome.look}">
<p class="verdict verdict-${outcome.look}">${escapeHtml(verdict)}</p>
<h1>${outcome.verdict === '' ? '' : `<span class="title-verdict">${escapeHtml(outcome.verdict)}:</span> `}${escapeHtml(firstLine(record.question, 140))}</h1>
<p class="subtitle">${counts.join(' · ')}</p>
${banners.join('\n')}
<section id="instruction" aria-label="Question"><p class="label">Question</p><blockquote class="instruction">${escapeHtml(record.question)}</blockquote></section>
${renderSummary(report)}
</header>`;
}

/** On the first screen: the key findings that answer the question, what could not be answered, and how they were made. */
function renderSummary(report: PreparedDeepReport): string {
  const { summary } = report;
  if (summary === null) return '';
  const findings =
    summary.findings.html.trim() === ''
      ? '<p class="note">No finding bears on what the question asks.</p>'
      : `<div class="answer markdown">${summary.findings.html}</div>`;
  const cannot =
    summary.cannotAnswer.length === 0
      ? ''
      : `<p class="label">What it could not answer</p><ul class="cannot-answer">${summary.cannotAnswer.map((line) => `<li>${renderSafeMarkdown(line).replace(/^<p>|<\/p>\s*$/g, '')}</li>`).join('')}</ul>`;
  const limits =
    summary.limits === null
      ? ''
      : `<p class="note summary-limits">${renderSafeMarkdown(summary.limits).replace(/^<p>|<\/p>\s*$/g, '')}</p>`;
  return `<section id="summary" aria-label="Summary"><p class="label">Key findings</p>${findings}${cannot}${limits}</section>`;
}

/** The files the workspace's profile could not read, and why: no sub-analysis saw them. */
function renderUnreadableFiles(report: PreparedDeepReport): string {
  const unread = unreadableFiles(report);
  if (unread.length === 0) return '';
  const items = unread
    .map((file) => `<li><span class="mono">${escapeHtml(file.path)}</span>: ${escapeHtml(file.error)}</li>`)
    .join('');
  return `<h3 id="unreadable-files">Files that could not be read</h3>
<p class="note">The workspace's profile could not read ${unread.length === 1 ? 'this file' : `these ${unread.length} files`}, so no sub-analysis saw ${unread.length === 1 ? 'it' : 'them'}.</p>
<ul class="reading-notes unreadable-files">${items}</ul>`;
}

function renderBrief(report: PreparedDeepReport): string {
  const { brief, ask } = report.record;
  if (brief === null) {
    const body =
      ask === null
        ? '<p class="note">The run wrote no brief.</p>'
        : `<p class="label">The analysis asked first</p><blockquote class="instruction">${escapeHtml(ask)}</blockquote>`;
    return `<section id="brief"><h2>Brief</h2>${body}${renderUnreadableFiles(report)}</section>`;
  }
  const questions = brief.questions
    .map(
      (entry, index) =>
        `<li${report.unresearched.includes(index) ? ' class="not-researched"' : ''}><span class="brief-question">${escapeHtml(entry.question)}</span>${report.unresearched.includes(index) ? ' <span class="not-researched-mark">not researched</span>' : ''}${entry.tables.length === 0 ? '' : `<br><span class="tables">Tables: ${entry.tables.map((table) => `<span class="mono">${escapeHtml(table)}</span>`).join(', ')}</span>`}</li>`,
    )
    .join('');
  return `<section id="brief"><h2>Brief</h2>
<ol class="brief">${questions}</ol>
<p class="label">A good answer</p><p class="good-answer">${escapeHtml(brief.goodAnswer)}</p>
${renderUnreadableFiles(report)}
</section>`;
}

function renderSections(report: PreparedDeepReport): string {
  if (report.sections.length === 0)
    return `<section id="report"><h2>Report</h2><p class="note">No section was written.</p></section>`;
  const sections = report.sections.map((view) => {
    const checked = view.html.numbers.length;
    const verified = view.html.numbers.filter((number) => number.verified).length;
    const grounding =
      checked === 0
        ? ''
        : `<p class="grounding">${verified} of ${plural(checked, 'number')} found in the outputs of the evidence this section cites.</p>`;
    const error =
      view.section.error === null
        ? ''
        : `<p class="banner banner-outcome" role="alert">The writer failed for this section (${escapeHtml(view.section.error)}); its evidence is listed instead.</p>`;
    const unknown =
      view.unknownCitations.length === 0
        ? ''
        : `<p class="note">Cites ${view.unknownCitations.map(escapeHtml).join(', ')}, which the evidence bank does not hold.</p>`;
    const cites =
      view.evidenceIds.length === 0
        ? ''
        : `<p class="cites">Evidence: ${view.evidenceIds.map((id) => `<a href="#${escapeHtml(evidenceAnchor(id))}">${escapeHtml(id)}</a>`).join(' ')}</p>`;
    const visuals = view.visuals.flatMap((visual) => renderVisual(report, visual, visual.anchor) ?? []);
    return `<section class="deep-section" id="${escapeHtml(sectionAnchor(view.section.id))}"><h2>${escapeHtml(view.section.title)}</h2>
${error}${grounding}<div class="answer markdown">${view.html.html}</div>${unknown}${cites}
${visuals.length === 0 ? '' : `<div class="gallery">${visuals.join('\n')}</div>`}
</section>`;
  });
  return `<div id="report">${sections.join('\n')}</div>`;
}

function renderEvidence(report: PreparedDeepReport): string {
  if (report.evidence.length === 0) {
    const stopped = cancelledBeforeCompressing(report);
    return `<section id="evidence"><h2>Evidence</h2><p class="note">${escapeHtml(stopped === null ? 'The evidence bank is empty.' : `No evidence was banked. ${stopped}`)}</p></section>`;
  }
  const items = report.evidence.map(({ item, claim, visuals, citedBy }) => {
    const unverified = item.numbers.filter((number) => !number.verified);
    const flag =
      unverified.length === 0
        ? ''
        : `<p class="note num-unverified-note">Not found in the outputs it cites: ${unverified.map((number) => `<span class="num num-unverified">${escapeHtml(number.text)}<sup>?</sup></span>`).join(', ')}</p>`;
    const outputs = item.outputs
      .map((output) => `<a href="#${escapeHtml(deepOutputAnchor(output))}">${escapeHtml(output)}</a>`)
      .join(' ');
    const figureLinks = visuals
      .map(
        (visual) =>
          `<a href="#${escapeHtml(visualTarget(report, visual))}">${escapeHtml(visualLabel(visual))}</a>`,
      )
      .join(', ');
    const sections = citedBy
      .map((id) => {
        const title = report.sections.find((view) => view.section.id === id)?.section.title ?? id;
        return `<a href="#${escapeHtml(sectionAnchor(id))}">${escapeHtml(title)}</a>`;
      })
      .join(', ');
    return `<li class="evidence-item" id="${escapeHtml(evidenceAnchor(item.id))}"><span class="evidence-id">${escapeHtml(item.id)}</span><div class="claim markdown">${claim.html}</div>${flag}<p class="evidence-sources">From <a href="#${escapeHtml(subAnchor(item.subAnalysisId))}">${escapeHtml(item.subAnalysisId)}</a>, printed by ${outputs || 'no output'}${figureLinks === '' ? '' : `; ${figureLinks}`}${sections === '' ? '; cited by no section' : `; cited in ${sections}`}.</p></li>`;
  });
  return `<section id="evidence"><h2>Evidence</h2>
<p class="note">Each finding of the sub-analyses under a stable id, with the outputs that printed it. Numbers are checked against those outputs; one found in none is marked <span class="num num-unverified">like this<sup>?</sup></span>.</p>
<ol class="evidence">${items.join('\n')}</ol>
</section>`;
}

function clip(text: string, maxChars: number): string {
  return text.length > maxChars
    ? `${text.slice(0, maxChars)}\n… (shortened; the sub-run's trace has it all)`
    : text;
}

function renderCell(
  report: PreparedDeepReport,
  sub: DeepSubView,
  execution: ExecutionRecord,
  maxOutputChars: number,
): string {
  const { result, outputId } = execution;
  const cited = `${sub.record.id}:${outputId}`;
  const parts: string[] = [];
  if (result.statusDetail) parts.push(`<p class="note">${escapeHtml(result.statusDetail)}</p>`);
  if (result.stdout.text !== '')
    parts.push(
      `<pre class="stdout">${escapeHtml(clip(cleanOutputText(result.stdout.text), maxOutputChars))}</pre>`,
    );
  if (result.stderr.text !== '')
    parts.push(
      `<pre class="stderr">${escapeHtml(clip(cleanOutputText(result.stderr.text), maxOutputChars))}</pre>`,
    );
  if (result.error)
    parts.push(
      `<pre class="error">${escapeHtml(clip(cleanOutputText(`${result.error.name}: ${result.error.value}\n${result.error.traceback}`), maxOutputChars))}</pre>`,
    );
  if (result.value !== null)
    parts.push(
      `<pre class="stdout value">${escapeHtml(clip(cleanOutputText(result.value), maxOutputChars))}</pre>`,
    );
  result.tables.forEach((table) => parts.push(renderDataTable(table)));
  const visuals = visualsOfExecution(sub.record.id, execution);
  for (const visual of visuals) {
    const placed = placedVisual(report, visual);
    if (placed !== null) {
      parts.push(
        `<p class="note"><a href="#${escapeHtml(placed.anchor)}">${escapeHtml(visualLabel(visual))}</a> is shown with the section it supports${placed === visual ? '' : ` (the same as ${escapeHtml(visualLabel(placed))})`}.</p>`,
      );
      continue;
    }
    parts.push(
      renderVisual(report, visual, null) ??
        `<p class="note">${escapeHtml(visualLabel(visual))} is not in the trace (omitted or not a valid image).</p>`,
    );
  }
  const heading = `<span class="kind">Code</span>Round ${execution.round} <span class="status status-${escapeHtml(result.status)}">→ ${escapeHtml(cited)}: ${escapeHtml(result.status)}, ${formatDuration(result.durationMs)}</span>`;
  return `<article class="step step-code"><h4>${heading}</h4><pre><code class="hljs language-python">${highlightPython(execution.code)}</code></pre><div class="output" id="${escapeHtml(deepOutputAnchor(cited))}"><span class="output-id">${escapeHtml(cited)}</span>${parts.join('') || '<p class="status">(no output)</p>'}</div></article>`;
}

function renderSubAnalyses(report: PreparedDeepReport, maxOutputChars: number): string {
  if (report.subs.length === 0)
    return `<section id="sub-analyses"><h2>Sub-analyses</h2><p class="note">No sub-analysis was started.</p></section>`;
  const articles = report.subs.map((sub) => {
    const { record } = sub;
    const facts: Array<[string, Fact]> = [
      ['Outcome', outcomeLabels[record.outcome] ?? record.outcome],
      ['Termination', record.termination ?? 'none'],
      ['Rounds', sub.rounds === null ? 'unknown' : String(sub.rounds)],
      [
        'Round of the plan',
        record.round === 0 ? 'asked by the supervisor' : `asked by the planner (round ${record.round})`,
      ],
      ['Started', record.startedAt === null ? 'never' : { time: record.startedAt }],
      ['Ended', record.endedAt === null ? 'never' : { time: record.endedAt }],
      ['Folder', record.runDir ?? 'none'],
      ['Evidence', record.evidenceIds.join(' ') || 'none'],
    ];
    const cells =
      sub.executions.length === 0
        ? `<p class="note">${escapeHtml(sub.traceNote ?? 'It ran no cell.')}</p>`
        : `<details class="cells"><summary>Its ${plural(sub.executions.length, 'cell')}</summary>${sub.executions.map((execution) => renderCell(report, sub, execution, maxOutputChars)).join('\n')}</details>`;
    const answer =
      record.answer === null
        ? ''
        : `<details class="sub-answer"><summary>Its answer</summary><div class="markdown">${renderSafeMarkdown(record.answer)}</div></details>`;
    // The head (question, outcome, tables, facts) is one block, so that paper never splits it.
    return `<article class="sub-analysis sub-${escapeHtml(record.outcome)}" id="${escapeHtml(subAnchor(record.id))}"><div class="sub-head"><h3><span class="kind">${escapeHtml(record.id)}</span>${escapeHtml(record.question)}</h3>
<p class="detail">${escapeHtml(record.detail)}</p>
${record.tables.length === 0 ? '' : `<p class="tables">Tables: ${record.tables.map((table) => `<span class="mono">${escapeHtml(table)}</span>`).join(', ')}</p>`}
${factList(facts)}</div>
${answer}${cells}
</article>`;
  });
  // Paper shows each cell's outputs, not its code (deep-report-styles.ts says why): the page says where the code is.
  return `<section id="sub-analyses"><h2>Sub-analyses</h2>
<p class="note print-only">Each cell below shows what it printed, not its code: the code is in the HTML report and the notebook (<code>datalyst report &lt;this run folder&gt; --format html,ipynb</code>) and in each sub-analysis&#39;s <code>sub/S1/trace.jsonl</code>.</p>
${articles.join('\n')}
</section>`;
}

function renderProvenance(report: PreparedDeepReport): string {
  const { record } = report;
  const outcomes = new Map<string, number>();
  for (const sub of record.subAnalyses) outcomes.set(sub.outcome, (outcomes.get(sub.outcome) ?? 0) + 1);
  const facts: Array<[string, Fact]> = [
    [
      'Model',
      record.model.offline
        ? `${record.model.id} (built-in offline analyst; no language model)`
        : record.model.id,
    ],
    [
      'Termination',
      `${record.termination.reason}${record.termination.detail ? `: ${record.termination.detail}` : ''}`,
    ],
    ['Sub-analyses', [...outcomes].map(([outcome, count]) => `${count} ${outcome}`).join(', ') || 'none'],
    ['At once', String(record.concurrency)],
    ['Planning rounds', record.outline === null ? 'none' : String(record.outline.rounds)],
    [
      'Tokens',
      `${record.usage.promptTokens.toLocaleString('en-US')} prompt, ${record.usage.completionTokens.toLocaleString('en-US')} completion`,
    ],
    ['Started', { time: record.startedAt }],
    ['Ended', record.endedAt === null ? 'unknown' : { time: record.endedAt }],
    ['Run id', record.runId],
  ];
  return `<section id="provenance"><h2>Provenance</h2>
${factList(facts)}
</section>`;
}

/** The contents bar, sticky at the top as in the single run's report, with the verdict when the run did not answer. */
function deepToc(outcome: OutcomePresentation): string {
  return contentsBar(
    [
      ['#brief', 'Brief'],
      ['#report', 'Report'],
      ['#evidence', 'Evidence'],
      ['#sub-analyses', 'Sub-analyses'],
      ['#provenance', 'Provenance'],
    ],
    outcome.verdict === '' ? '' : `<span class="toc-verdict">${escapeHtml(outcome.verdict)}</span>`,
  );
}

/** The deep run's report as one self-contained HTML document. */
export function renderDeepHtmlReport(report: PreparedDeepReport, options: DeepHtmlOptions = {}): string {
  const maxOutputChars = options.maxOutputChars ?? 20_000;
  const outcome = deepOutcomePresentation(report);
  const question = firstLine(report.record.question, 90);
  const title =
    outcome.verdict === '' ? `Datalyst deep analysis: ${question}` : `${outcome.verdict}: ${question}`;
  return `${reportDocumentHead(title, deepReportStyles)}
<body class="look-${outcome.look}">
${deepToc(outcome)}
<main>
${renderHeader(report, outcome)}
${renderBrief(report)}
${renderSections(report)}
${renderEvidence(report)}
${renderSubAnalyses(report, maxOutputChars)}
${renderProvenance(report)}
<footer>Rendered by Datalyst from deep.json and the sub-analyses' traces at ${timeHtml(report.generatedAt)}. Numbers marked <span class="num num-verified">like this<sup>S1:E1</sup></span> were found in the output named; numbers marked <span class="num num-unverified">like this<sup>?</sup></span> were printed by none of the outputs the text cites.</footer>
</main>
</body>
</html>
`;
}
