import type { ExecutionRecord, StepRecord } from '../trace/schema.ts';
import type { Table } from '../sandbox/cell-result.ts';
import type { RenderedChart } from './rendered-chart.ts';
import { escapeHtml } from './html-escape.ts';
import { renderDataTable } from './html-table.ts';
import { cleanOutputText } from '../trace/output-text.ts';
import { chartKey, figureKey, missingVisualNote, outputAnchor } from './prepared-report.ts';
import type { PreparedReport } from './prepared-report.ts';
import { reportStyles } from './report-styles.ts';
import { markdownPlainText, renderSafeMarkdown } from './safe-markdown.ts';
import type { ProcessEntry } from './run-view.ts';
import { askerName, noAnswerText, stripCodeFence } from './run-view.ts';
import { madeBy } from './made-by.ts';
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
import { highlightPython } from './python-highlighter.ts';
import { readingNotes } from './reading-notes.ts';
import type { WorkspaceProfile } from '../sandbox/workspace-profile.ts';
import { renderDataSection } from './data-section-html.ts';
import { outcomePresentation } from './outcome-look.ts';
import type { OutcomePresentation } from './outcome-look.ts';
import { rerunOfFacts } from './rerun-of.ts';
import { emptyGalleryNote } from './empty-gallery-note.ts';

/** Images of artifacts (PNG/JPEG/GIF/WebP the code saved), embedded as data: URIs. */
export type ArtifactImages = ReadonlyMap<string, { mimeType: string; base64: string }>;

export interface HtmlReportOptions {
  /** Characters of one output stream shown; the full text stays in trace.json. Default 100 000. */
  maxOutputChars?: number;
  artifactImages?: ArtifactImages;
}

/**
 * No script runs, nothing is fetched: images are data: URIs, styles are
 * inline. Model text and data are escaped; the policy is a second wall.
 */
export const reportContentSecurityPolicy =
  "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'";

/**
 * A report page's doctype and `<head>`: the policy above, no referrer, the
 * title (escaped here) and the page's own styles, inline. `<body>` follows.
 */
export function reportDocumentHead(title: string, styles: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${reportContentSecurityPolicy}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="generator" content="Datalyst">
<title>${escapeHtml(title)}</title>
<style>${styles}</style>
</head>`;
}

/** The whole report as one self-contained HTML document. */
export function renderHtmlReport(report: PreparedReport, options: HtmlReportOptions = {}): string {
  const context: HtmlContext = {
    report,
    maxOutputChars: options.maxOutputChars ?? 100_000,
    artifactImages: options.artifactImages ?? new Map(),
  };
  const { view } = report;
  const outcome = outcomePresentation(view, report.audience);
  const question = firstLine(view.start.instruction, 90);
  const title = outcome.verdict === '' ? `Datalyst report: ${question}` : `${outcome.verdict}: ${question}`;
  const visuals = collectVisuals(context);
  const key = keyVisuals(visuals, report);
  const rest = visuals.filter((visual) => !key.includes(visual));
  return `${reportDocumentHead(title, reportStyles)}
<body class="look-${outcome.look}">
${renderToc(context, outcome)}
<main>
${renderHeader(context, outcome)}
<div class="lead${key.length > 0 ? ' lead-with-visuals' : ''}">
${renderAnswer(context, outcome)}
${key.length > 0 ? `<aside class="key-visuals" aria-label="Key charts"><h2>Key charts</h2>${key.map((visual) => visual.html).join('\n')}</aside>` : ''}
</div>
${renderGallery(context, rest, key.length)}
${renderDataSection(view.profile, report.numberIndex, outputAnchor)}
${renderProcess(context, outcome)}
${renderProvenance(context)}
<footer>Rendered by Datalyst from trace.json at ${timeHtml(report.generatedAt)}. Numbers marked <span class="num num-verified">like this<sup>E1</sup></span> were found in the execution output named; numbers marked <span class="num num-unverified">like this<sup>?</sup></span> were printed by no execution.</footer>
</main>
${visuals.map((visual) => visual.lightbox).join('\n')}
</body>
</html>
`;
}

interface HtmlContext {
  report: PreparedReport;
  maxOutputChars: number;
  artifactImages: ArtifactImages;
}

function renderToc({ report }: HtmlContext, outcome: OutcomePresentation): string {
  const links: Array<[string, string]> = [
    ['#answer', report.turns.length > 1 ? 'Conversation' : 'Answer'],
    ['#figures', 'Figures'],
    ['#data', 'Data'],
    ['#process', 'Process'],
    ['#provenance', 'Provenance'],
  ];
  const verdict =
    outcome.verdict === '' ? '' : `<span class="toc-verdict">${escapeHtml(outcome.verdict)}</span>`;
  return contentsBar(links, verdict);
}

/** The sticky contents bar of a report (the single run's and the deep one's): a link to the top, then `links`. */
export function contentsBar(links: readonly (readonly [string, string])[], verdictHtml = ''): string {
  return `<nav class="toc" aria-label="Contents"><div class="toc-inner"><a class="toc-top" href="#top">Datalyst</a>${verdictHtml}${links.map(([href, label]) => `<a href="${href}">${label}</a>`).join('')}</div></nav>`;
}

/** Plain text whose `backticked` names (a column, a command) are shown as code: escaped first, so only the backticks make markup. */
function inlineCodeHtml(text: string): string {
  return escapeHtml(text).replace(/`([^`\n]+)`/g, '<code>$1</code>');
}

function renderHeader({ report }: HtmlContext, outcome: OutcomePresentation): string {
  const { view } = report;
  const banners: string[] = [];
  if (outcome.happened !== null) {
    banners.push(
      `<div class="banner banner-outcome banner-${outcome.look}" role="alert"><p><strong>What happened.</strong> ${inlineCodeHtml(outcome.happened)}</p>${outcome.todo === null ? '' : `<p><strong>What to do.</strong> ${inlineCodeHtml(outcome.todo)}</p>`}</div>`,
    );
  }
  const made = madeBy(view);
  if (made.noModelNote !== null) {
    banners.push(
      `<div class="banner banner-offline" role="note"><strong>No language model was used.</strong> ${escapeHtml(made.noModelNote)}</div>`,
    );
  }
  const subtitle = [
    escapeHtml(`Run ${view.start.runId}`),
    `started ${timeHtml(view.start.startedAt)}`,
    ...made.subtitle.map((part) => escapeHtml(part)),
  ];
  const question = firstLine(view.start.instruction, 140);
  const fullQuestion =
    view.start.instruction.trim() === question
      ? ''
      : `<details class="instruction-full"><summary>The whole instruction</summary><blockquote class="instruction">${escapeHtml(view.start.instruction)}</blockquote></details>`;
  return `<header id="top" class="band band-${outcome.look}">
<p class="verdict verdict-${outcome.look}">${escapeHtml(outcome.verdict === '' ? 'Answered' : outcome.verdict)}</p>
<h1 id="instruction">${outcome.verdict === '' ? '' : `<span class="title-verdict">${escapeHtml(outcome.verdict)}:</span> `}${escapeHtml(question)}</h1>
<p class="subtitle">${subtitle.join(' · ')}</p>
${fullQuestion}
${banners.join('\n')}
</header>`;
}

/** A thread: each question, then its answer (or how its turn ended), in order. */
function renderConversation({ report }: HtmlContext): string {
  const turns = report.turns.map(({ view: turn, answer }) => {
    const label = turn.replyToAsk ? 'Reply' : 'Question';
    let body: string;
    if (answer !== null) {
      const checked = answer.numbers.length;
      const verified = answer.numbers.filter((number) => number.verified).length;
      const grounding =
        checked === 0
          ? ''
          : `<p class="grounding">${verified} of ${checked} number${checked === 1 ? '' : 's'} found in the execution outputs.</p>`;
      body = `${grounding}<div class="answer markdown">${answer.html}</div>`;
    } else if (turn.ask !== null) {
      // Markdown as the answers are: the question back may name columns as `code`, in paragraphs.
      body = `<p class="label">${askerName(report.view.start.model.offline)} asked</p><blockquote class="ask markdown">${renderSafeMarkdown(turn.ask, { nestHeadingsUnder: 3 })}</blockquote>`;
    } else {
      body = `<p class="note">${escapeHtml(noAnswerText(turn.termination))}</p>`;
    }
    return `<article class="turn" id="conversation-${turn.turn}"><h3>${label} ${turn.turn}</h3><blockquote class="instruction">${escapeHtml(turn.question)}</blockquote>${body}<p class="note"><a href="#turn-${turn.turn}">Its process</a></p></article>`;
  });
  return `<section id="answer"><h2>Conversation</h2>
${turns.join('\n')}
</section>`;
}

function renderAnswer(context: HtmlContext, outcome: OutcomePresentation): string {
  const { report } = context;
  if (report.turns.length > 1) return renderConversation(context);
  if (report.answer === null) {
    const what =
      outcome.look === 'no-data'
        ? 'There is no answer: no data was read. The Data section lists what the workspace held.'
        : 'There is no answer. The process below shows what was done; its last rounds are open.';
    return `<section id="answer" class="answer-missing"><h2>No answer</h2><p class="no-answer">${escapeHtml(what)}</p></section>`;
  }
  const { checked, verified, unverified } = report.grounding;
  const summary =
    checked === 0
      ? 'The answer states no numbers that could be checked against the execution outputs.'
      : `<strong>${verified} of ${checked}</strong> number${checked === 1 ? '' : 's'} in the answer ${checked === 1 ? 'was' : 'were'} found in the execution outputs` +
        (unverified > 0
          ? `; <strong>${unverified}</strong> ${unverified === 1 ? 'was' : 'were'} printed by no execution and ${unverified === 1 ? 'is' : 'are'} marked unverified.`
          : '.');
  const heading = outcome.look === 'answered' ? 'Answer' : 'Answer (incomplete run)';
  return `<section id="answer"><h2>${heading}</h2>
<p class="grounding" id="grounding-summary">${summary}</p>
<div class="answer markdown">${report.answer.html}</div>
</section>`;
}

/** A chart, figure or image file of the run, rendered once (the process and the enlarged view reuse it). */
interface Visual {
  outputId: string | null;
  kind: 'chart' | 'figure' | 'artifact';
  widthPx: number;
  html: string;
  lightbox: string;
}

function collectVisuals(context: HtmlContext): Visual[] {
  const { report } = context;
  const visuals: Visual[] = [];
  for (const execution of report.view.executions) {
    execution.result.charts.forEach((_chart, index) => {
      const key = chartKey(execution.outputId, index);
      const chart = report.charts.get(key);
      if (!chart) return;
      visuals.push({
        outputId: execution.outputId,
        kind: 'chart',
        widthPx: chart.widthPx,
        html: renderChartFigure(key, chart, execution.outputId, index, false),
        lightbox:
          chart.svg === null
            ? ''
            : lightbox(
                key,
                `${key}-svg`,
                chart.widthPx,
                chart.heightPx,
                `Chart ${index + 1} of output ${execution.outputId}`,
              ),
      });
    });
    execution.result.figures.forEach((_figure, index) => {
      const key = figureKey(execution.outputId, index);
      const figure = report.figures.get(key);
      if (!figure) return;
      const label = `Figure ${index + 1} of output ${execution.outputId}`;
      visuals.push({
        outputId: execution.outputId,
        kind: 'figure',
        widthPx: figure.widthPx,
        html: renderImageFigure(
          key,
          `data:image/png;base64,${figure.base64}`,
          figure.widthPx,
          figure.heightPx,
          label,
          execution.outputId,
          false,
        ),
        lightbox: lightbox(key, `${key}-image`, figure.widthPx, figure.heightPx, label),
      });
    });
  }
  report.view.artifacts.forEach((artifact, position) => {
    const image = context.artifactImages.get(artifact.path);
    if (!image) return;
    const key = `artifact-${position + 1}`;
    visuals.push({
      outputId: artifact.outputId,
      kind: 'artifact',
      widthPx: 0,
      html: `<figure id="${key}"><img src="data:${escapeHtml(image.mimeType)};base64,${image.base64}" alt="${escapeHtml(artifact.path)}" loading="lazy"><figcaption>File <span class="mono">${escapeHtml(artifact.path)}</span>${artifact.outputId ? `, written by <a href="#${outputAnchor(artifact.outputId)}">${escapeHtml(artifact.outputId)}</a>` : ''}</figcaption></figure>`,
      lightbox: '',
    });
  });
  return visuals;
}

const MAX_KEY_VISUALS = 3;

/**
 * The charts beside the answer on the first screen: those of the outputs the
 * answer's verified numbers came from (vega charts first, then figures narrow
 * enough for the column), else the run's first charts.
 */
function keyVisuals(visuals: readonly Visual[], report: PreparedReport): Visual[] {
  const cited = new Set(
    (report.answer?.numbers ?? []).flatMap((number) => (number.outputId === null ? [] : [number.outputId])),
  );
  const fits = (visual: Visual): boolean => visual.kind !== 'artifact' && visual.widthPx < 1000;
  const candidates = visuals.filter(
    (visual) => fits(visual) && visual.outputId !== null && cited.has(visual.outputId),
  );
  const pool = candidates.length > 0 ? candidates : visuals.filter(fits);
  const ordered = [
    ...pool.filter((visual) => visual.kind === 'chart'),
    ...pool.filter((visual) => visual.kind !== 'chart'),
  ];
  return ordered.slice(0, MAX_KEY_VISUALS);
}

/** A figure enlarged on the whole screen, shown by CSS alone when its id is the URL's fragment (`:target`). */
function lightbox(key: string, href: string, widthPx: number, heightPx: number, label: string): string {
  return `<div class="lightbox" id="zoom-${key}" role="dialog" aria-label="${escapeHtml(label)}, enlarged"><a class="lightbox-close" href="#${key}" aria-label="Close">×</a><svg viewBox="0 0 ${widthPx} ${heightPx}" width="${widthPx}" height="${heightPx}" style="--ratio: ${widthPx} / ${heightPx}" role="img" aria-label="${escapeHtml(label)}"><use href="#${href}"/></svg></div>`;
}

function renderGallery(context: HtmlContext, visuals: readonly Visual[], keyVisualsShown: number): string {
  const { report } = context;
  const evidence = evidenceTables(report);
  const tables = evidence.map(
    ({ execution, table, index }) =>
      `<h3>Table ${index + 1} of output <a href="#${outputAnchor(execution.outputId)}">${escapeHtml(execution.outputId)}</a></h3>${renderDataTable(table)}`,
  );
  const body =
    visuals.length === 0 && tables.length === 0
      ? `<p class="note">${escapeHtml(emptyGalleryNote(report, keyVisualsShown))}</p>`
      : `${visuals.length > 0 ? `<div class="gallery">${visuals.map((visual) => visual.html).join('\n')}</div>` : ''}${tables.join('\n')}`;
  return `<section id="figures"><h2>Figures and tables</h2>
${body}
</section>`;
}

/** Tables of the outputs that the answer's verified numbers came from: the answer's evidence. */
function evidenceTables(
  report: PreparedReport,
): Array<{ execution: ExecutionRecord; table: Table; index: number }> {
  const cited = new Set(
    (report.answer?.numbers ?? []).flatMap((number) => (number.outputId === null ? [] : [number.outputId])),
  );
  return report.view.executions
    .filter((execution) => cited.has(execution.outputId))
    .flatMap((execution) => execution.result.tables.map((table, index) => ({ execution, table, index })));
}

// The first rendering of a chart carries the markup; later ones reuse it with <use>, so a
// chart shown in the gallery and again in the process costs its size once.
function renderChartFigure(
  key: string,
  chart: RenderedChart,
  outputId: string,
  index: number,
  reuse: boolean,
): string {
  const caption = `<figcaption>Chart ${index + 1} of output <a href="#${outputAnchor(outputId)}">${escapeHtml(outputId)}</a>${chart.notes.map((note) => `<span class="note"> ${escapeHtml(note)}</span>`).join('')}</figcaption>`;
  if (chart.svg === null) {
    return `<figure class="chart chart-failed"${reuse ? '' : ` id="${key}"`}><div class="chart-error" role="alert"><strong>This chart could not be drawn.</strong> ${escapeHtml(chart.error ?? 'Unknown error.')}</div>${caption}</figure>`;
  }
  if (reuse) {
    return `<figure class="chart chart-reuse${wideClass(chart.widthPx)}"><svg class="reuse" viewBox="0 0 ${chart.widthPx} ${chart.heightPx}" width="${chart.widthPx}" height="${chart.heightPx}" role="img" aria-label="Chart ${index + 1} of output ${escapeHtml(outputId)}"><use href="#${key}-svg"/></svg>${caption}</figure>`;
  }
  const svg = chart.svg.replace(
    /^<svg\b/,
    `<svg id="${key}-svg" role="img" aria-label="Chart ${index + 1} of output ${escapeHtml(outputId)}"`,
  );
  return `<figure class="chart${wideClass(chart.widthPx)}" id="${key}">${svg}${zoomLink(key)}${caption}</figure>`;
}

/** The link that opens a figure large (see `lightbox`); covers the figure, so a click on it enlarges it. */
function zoomLink(key: string): string {
  return `<a class="zoom" href="#zoom-${key}" aria-label="Enlarge"><span>Enlarge</span></a>`;
}

/** A figure wider than half the page would shrink to illegible in a grid cell: it gets a row of its own. */
function wideClass(widthPx: number): string {
  return widthPx >= 1000 ? ' wide' : '';
}

function renderImageFigure(
  key: string,
  dataUri: string,
  widthPx: number,
  heightPx: number,
  label: string,
  outputId: string,
  reuse: boolean,
): string {
  const caption = `<figcaption>${escapeHtml(label.replace(/ of output .*$/, ''))} of output <a href="#${outputAnchor(outputId)}">${escapeHtml(outputId)}</a></figcaption>`;
  if (reuse) {
    return `<figure class="figure figure-reuse${wideClass(widthPx)}"><svg class="reuse" viewBox="0 0 ${widthPx} ${heightPx}" width="${widthPx}" height="${heightPx}" role="img" aria-label="${escapeHtml(label)}"><use href="#${key}-image"/></svg>${caption}</figure>`;
  }
  return `<figure class="figure${wideClass(widthPx)}" id="${key}"><svg viewBox="0 0 ${widthPx} ${heightPx}" width="${widthPx}" height="${heightPx}" role="img" aria-label="${escapeHtml(label)}"><image id="${key}-image" href="${dataUri}" width="${widthPx}" height="${heightPx}"/></svg>${zoomLink(key)}${caption}</figure>`;
}

/** Process entries of one round (or a question heading of a thread), in order. */
type ProcessGroup =
  { kind: 'turn'; entry: ProcessEntry } | { kind: 'round'; round: number; entries: ProcessEntry[] };

function entryRound(entry: ProcessEntry): number | null {
  switch (entry.kind) {
    case 'step':
      return entry.step.round;
    case 'notice':
      // A question's replay notice stands under its heading, in no round.
      return entry.beforeRounds === true ? null : entry.notice.round;
    case 'cell':
      return entry.execution?.round ?? entry.step?.round ?? 0;
    case 'turn':
      return null;
  }
}

function groupByRound(entries: readonly ProcessEntry[]): ProcessGroup[] {
  const groups: ProcessGroup[] = [];
  for (const entry of entries) {
    const round = entryRound(entry);
    const last = groups.at(-1);
    if (round === null) groups.push({ kind: 'turn', entry });
    else if (last?.kind === 'round' && last.round === round) last.entries.push(entry);
    else groups.push({ kind: 'round', round, entries: [entry] });
  }
  return groups;
}

/**
 * The process in full, folded: one `<details>` per round, its summary saying
 * what the round did; code is folded again inside. A run that did not answer
 * opens its last round (where it stopped) and any round with a failed cell.
 */
function renderProcess(context: HtmlContext, outcome: OutcomePresentation): string {
  const groups = groupByRound(context.report.view.process);
  const rounds = groups.filter((group) => group.kind === 'round');
  const lastRound = rounds.at(-1);
  const body = groups.map((group) => {
    if (group.kind === 'turn') return renderProcessEntry(group.entry, context);
    const failed = group.entries.some(
      (entry) => entry.kind === 'cell' && entry.execution !== null && entry.execution.result.status !== 'ok',
    );
    const open = outcome.look !== 'answered' && (group === lastRound || failed);
    return `<details class="round${failed ? ' round-failed' : ''}" id="round-${group.round}"${open ? ' open' : ''}><summary>${roundSummary(group.round, group.entries)}</summary>
${group.entries.map((entry) => renderProcessEntry(entry, context)).join('\n')}
</details>`;
  });
  const hint =
    rounds.length === 0
      ? ''
      : '<p class="process-hint">Each round is folded: open one to read what was thought, the code (folded again) and what it printed. A link to an output (E1, E2, …) opens its round.</p>';
  return `<section id="process"><h2>Process</h2>
${hint}
${groups.length === 0 ? '<p class="note">The trace holds no steps.</p>' : body.join('\n')}
</section>`;
}

function roundSummary(round: number, entries: readonly ProcessEntry[]): string {
  const parts: string[] = [];
  let gist = '';
  for (const entry of entries) {
    if (entry.kind === 'step') {
      parts.push(`<span class="kind">${stepLabel[entry.step.kind]}</span>`);
      if (gist === '' && entry.step.kind !== 'answer')
        gist = firstLine(markdownPlainText(entry.step.text), 110);
    } else if (entry.kind === 'notice') {
      parts.push(`<span class="kind">${escapeHtml(entry.notice.kind)}</span>`);
    } else if (entry.kind === 'cell') {
      const execution = entry.execution;
      parts.push(
        execution === null
          ? '<span class="kind">Code</span><span class="status">not executed</span>'
          : `<span class="kind">Code</span><span class="status status-${execution.result.status}">${escapeHtml(execution.outputId)} ${escapeHtml(execution.result.status)}, ${formatDuration(execution.result.durationMs)}</span>`,
      );
    }
  }
  return `<span class="round-number">Round ${round}</span>${parts.join('')}${gist === '' ? '' : `<span class="gist">${escapeHtml(gist)}</span>`}`;
}

function renderProcessEntry(entry: ProcessEntry, context: HtmlContext): string {
  switch (entry.kind) {
    case 'step': {
      const { step } = entry;
      const unclosed = step.closed ? '' : ' <span class="note">(the model stopped inside this tag)</span>';
      const body =
        step.kind === 'answer'
          ? `<p class="note">The answer is shown${context.report.turns.length > 1 ? ' in the conversation' : ''} at the top of this report.</p>`
          : `<div class="markdown">${renderSafeMarkdown(step.text, { nestHeadingsUnder: 3 })}</div>`;
      return `<article class="step step-${step.kind}"><h3><span class="kind">${stepLabel[step.kind]}</span>Round ${step.round}${unclosed}</h3>${body}</article>`;
    }
    case 'notice':
      return `<article class="step step-notice"><h3><span class="kind">${escapeHtml(entry.notice.kind)}</span>${entry.beforeRounds === true ? 'Before the first round' : `Round ${entry.notice.round}`}</h3><p>${escapeHtml(entry.notice.text)}</p></article>`;
    case 'cell':
      return renderCell(entry.step, entry.execution, context);
    case 'turn':
      return `<h3 class="turn-heading" id="turn-${entry.turn.turn}">${entry.turn.replyToAsk ? 'Reply' : 'Question'} ${entry.turn.turn}: ${escapeHtml(firstLine(entry.turn.question, 200))}</h3>`;
  }
}

function renderCell(
  step: StepRecord | null,
  execution: ExecutionRecord | null,
  context: HtmlContext,
): string {
  const round = execution?.round ?? step?.round ?? 0;
  const code = execution?.code ?? stripCodeFence(step?.text ?? '');
  const highlighted = highlightPython(code);
  const heading = execution
    ? `<span class="kind">Code</span>Round ${round} <span class="status status-${execution.result.status}">→ ${escapeHtml(execution.outputId)}: ${escapeHtml(execution.result.status)}, ${formatDuration(execution.result.durationMs)}</span>`
    : `<span class="kind">Code</span>Round ${round} <span class="status">(not executed)</span>`;
  const output = execution ? renderOutput(execution, context) : '';
  const lines = code === '' ? 0 : code.split('\n').length;
  return `<article class="step step-code"><h3>${heading}</h3><details class="code"><summary>Code (${lines} line${lines === 1 ? '' : 's'})</summary><pre><code class="hljs language-python">${highlighted}</code></pre></details>${output}</article>`;
}

function renderOutput(execution: ExecutionRecord, context: HtmlContext): string {
  const { result, outputId } = execution;
  const parts: string[] = [];
  if (result.statusDetail) parts.push(`<p class="note">${escapeHtml(result.statusDetail)}</p>`);
  if (result.stateLost)
    parts.push(
      '<p class="note">The kernel was restarted: variables and imports from earlier cells were lost.</p>',
    );
  parts.push(renderStream('stdout', result.stdout.text, result.stdout.truncated, context));
  parts.push(renderStream('stderr', result.stderr.text, result.stderr.truncated, context));
  if (result.error) {
    parts.push(
      `<pre class="error">${escapeHtml(cleanOutputText(`${result.error.name}: ${result.error.value}\n${result.error.traceback}`))}</pre>`,
    );
  }
  if (result.value !== null) {
    const value = `<pre class="stdout value" title="The value of the cell's last expression">${escapeHtml(clip(cleanOutputText(result.value), context.maxOutputChars))}</pre>`;
    // A DataFrame value is shown as the table below; its text stays one click away.
    parts.push(
      result.tables.length > 0
        ? `<details class="value-text"><summary>The value as text</summary>${value}</details>`
        : value,
    );
  }
  result.tables.forEach((table) => parts.push(renderDataTable(table)));
  result.charts.forEach((trace, index) => {
    const key = chartKey(outputId, index);
    const chart = context.report.charts.get(key);
    if (chart) parts.push(renderChartFigure(key, chart, outputId, index, true));
    else
      parts.push(
        `<p class="note">${escapeHtml(missingVisualNote(trace, `Chart ${index + 1} of output ${outputId}`))}</p>`,
      );
  });
  result.figures.forEach((figure, index) => {
    const key = figureKey(outputId, index);
    const prepared = context.report.figures.get(key);
    if (prepared)
      parts.push(
        renderImageFigure(
          key,
          '',
          prepared.widthPx,
          prepared.heightPx,
          `Figure ${index + 1} of output ${outputId}`,
          outputId,
          true,
        ),
      );
    else
      parts.push(
        `<p class="note">${escapeHtml(missingVisualNote(figure, `Figure ${index + 1} of output ${outputId}`))}</p>`,
      );
  });
  if (result.files.length > 0) {
    parts.push(
      `<p class="status">Files written: ${result.files.map((file) => `<span class="mono">${escapeHtml(file.path)}</span> (${escapeHtml(file.change)}, ${formatBytes(file.sizeBytes)})`).join(', ')}</p>`,
    );
  }
  const nothing = parts.every((part) => part === '') ? '<p class="status">(no output)</p>' : '';
  return `<div class="output" id="${outputAnchor(outputId)}"><span class="output-id" title="Output id, cited by the answer">${escapeHtml(outputId)}</span>${nothing}${parts.join('')}</div>`;
}

function renderStream(
  name: 'stdout' | 'stderr',
  text: string,
  truncated: boolean,
  context: HtmlContext,
): string {
  if (text === '') return '';
  const cleaned = cleanOutputText(text);
  const shown = clip(cleaned, context.maxOutputChars);
  const notes = [
    truncated ? 'The sandbox kept only the start of this output.' : '',
    shown.length < cleaned.length
      ? `Shortened in this report to ${context.maxOutputChars.toLocaleString('en-US')} characters; trace.json has it all.`
      : '',
  ].filter((note) => note !== '');
  return `<pre class="${name}">${escapeHtml(shown)}</pre>${notes.map((note) => `<p class="note">${escapeHtml(note)}</p>`).join('')}`;
}

function renderProvenance({ report }: HtmlContext): string {
  const { view } = report;
  const { start } = view;
  const model = start.model;
  const cellMs = view.executions.reduce((total, execution) => total + execution.result.durationMs, 0);
  const modelMs = view.modelTurns.reduce((total, turn) => total + turn.durationMs, 0);
  // Plain text, escaped when written; a recorded time is a <time> element (timeHtml).
  const facts: Array<[string, string | { time: string }]> = [
    ['Model', model.offline ? `${model.id} (built-in offline analyst; no language model)` : model.id],
    ['Model profile', model.profile],
    ['Endpoint', safeBaseUrl(model.baseUrl) ?? 'none'],
    terminationFact(view),
    ['Rounds', roundsFact(view)],
    [
      'Tokens',
      `${view.usage.promptTokens.toLocaleString('en-US')} prompt, ${view.usage.completionTokens.toLocaleString('en-US')} completion`,
    ],
    ['Duration', durationFact(view)],
    [
      'Time in cells',
      `${formatDuration(cellMs)} over ${view.executions.length} execution${view.executions.length === 1 ? '' : 's'}${totalsScope(view)}`,
    ],
    ['Time in the model', `${formatDuration(modelMs)}${totalsScope(view)}`],
    ['Started', { time: start.startedAt }],
    ['Ended', view.end === null ? endedFact(view) : { time: view.end.endedAt }],
    [
      'Limits',
      `cell timeout ${formatDuration(start.limits.cellTimeoutMs)}, memory ${start.limits.memoryMb} MB, ${start.limits.cpus} CPU, deadline ${start.limits.deadlineMs === null ? 'none' : formatDuration(start.limits.deadlineMs)}, context budget ${start.limits.contextBudgetTokens.toLocaleString('en-US')} tokens`,
    ],
    ['Workspace', start.workspace.path],
    ['Run id', start.runId],
  ];
  const rerunOf = rerunOfFacts(start);
  if (rerunOf !== null)
    facts.push([
      'Re-run of',
      `run ${rerunOf.runId} (folder ${rerunOf.folderName}), trace SHA-256 ${rerunOf.traceSha256}; its recorded cells were run again on the input files below, with no model asked for code`,
    ]);
  const versions = report.toolVersions.map(([name, version]) => `${name} ${version}`).join(', ');
  facts.push(['Tool versions', versions]);
  // A thread whose workspace changed lists every version of its inputs, each with when it came.
  const changed = inputsChanged(view);
  const files = view.inputFiles
    .map(
      (file) =>
        `<tr><td class="mono">${escapeHtml(file.path)}</td><td>${formatExactBytes(file.sizeBytes)}</td>${changed ? `<td>${escapeHtml(inputFileWhen(file))}</td>` : ''}<td class="hash">${escapeHtml(file.sha256)}</td></tr>`,
    )
    .join('');
  const artifacts = view.artifacts
    .map(
      (artifact) =>
        `<tr><td class="mono">${escapeHtml(artifact.path)}</td><td>${formatBytes(artifact.sizeBytes)}</td><td>${artifact.outputId ? `<a href="#${outputAnchor(artifact.outputId)}">${escapeHtml(artifact.outputId)}</a>` : ''}</td><td class="hash">${escapeHtml(artifact.sha256)}</td></tr>`,
    )
    .join('');
  return `<section id="provenance"><h2>Provenance</h2>
<dl class="facts">${facts.map(([name, value]) => `<dt>${escapeHtml(name)}</dt><dd>${typeof value === 'string' ? escapeHtml(value) : timeHtml(value.time)}</dd>`).join('')}</dl>
<h3>Input files</h3>
${view.inputFiles.length === 0 ? '<p class="note">No input files were recorded.</p>' : `<table class="files"><thead><tr><th>File</th><th>Size</th>${changed ? '<th>When</th>' : ''}<th>SHA-256</th></tr></thead><tbody>${files}</tbody></table>`}
${readingNotesHtml(view.profile)}
${view.artifacts.length === 0 ? '' : `<h3>Files the code wrote (artifacts/)</h3><table class="files"><thead><tr><th>File</th><th>Size</th><th>Output</th><th>SHA-256</th></tr></thead><tbody>${artifacts}</tbody></table>`}
</section>`;
}

function readingNotesHtml(profile: WorkspaceProfile | null): string {
  const notes = readingNotes(profile);
  if (notes.length === 0) return '';
  const items = notes
    .map(({ file, note }) => `<li><span class="mono">${escapeHtml(file)}</span>: ${escapeHtml(note)}</li>`)
    .join('');
  return `<h3>How the files were read</h3><ul class="reading-notes">${items}</ul>`;
}

/** A recorded time as a person reads it (formatUtcTime), the exact ISO value kept for machines in `datetime`. */
export function timeHtml(iso: string): string {
  const readable = formatUtcTime(iso);
  return readable === iso
    ? escapeHtml(iso)
    : `<time datetime="${escapeHtml(iso)}">${escapeHtml(readable)}</time>`;
}

function firstLine(text: string, maxChars: number): string {
  const line = text.trim().split('\n')[0]?.trim() ?? '';
  return line.length > maxChars ? `${line.slice(0, maxChars - 1)}…` : line || 'Analysis';
}

function clip(text: string, maxChars: number): string {
  return text.length > maxChars ? text.slice(0, maxChars) : text;
}
