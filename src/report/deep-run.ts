import { stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { isAbsolute, join, normalize, sep } from 'node:path';
import { readDeepRecord } from '../deep/deep-record.ts';
import type { DeepRecord, EvidenceItem, SubAnalysisRecord, WrittenSection } from '../deep/deep-schema.ts';
import { TraceError } from '../errors/index.ts';
import { groundingSources } from '../trace/grounding-sources.ts';
import { buildNumberIndex } from '../trace/number-grounding.ts';
import { readTrace } from '../trace/reader.ts';
import type { WorkspaceProfile } from '../sandbox/workspace-profile.ts';
import type { ExecutionRecord, TraceRecord } from '../trace/schema.ts';
import { sharedChartPool } from './chart-pool.ts';
import type { ChartPool } from './chart-pool.ts';
import { chartKey, decodeFigures, figureKey, outputAnchor } from './prepared-report.ts';
import type { PreparedFigure } from './prepared-report.ts';
import type { OutcomePresentation } from './outcome-look.ts';
import type { RenderedChart } from './rendered-chart.ts';
import { plural } from '../util/plural.ts';
import { renderGroundedAnswer } from './safe-markdown.ts';
import type { GroundedAnswer } from './safe-markdown.ts';

/**
 * A deep run folder read for its report: `deep.json` (through the deep
 * record's schema, never the engine) and each sub-analysis's own trace under
 * `sub/<id>/`. Everything the HTML and Markdown forms share is computed here
 * once: the sub-analyses' executions, their charts drawn and figures checked,
 * each section's text and each claim grounded in the outputs of the evidence
 * it cites, and where each cited figure is placed (with the first section
 * that cites it).
 */

export interface DeepSubView {
  record: SubAnalysisRecord;
  /** Null when the sub-analysis never ran, or its trace is missing or unreadable (`traceNote` says which). */
  records: TraceRecord[] | null;
  traceNote: string | null;
  executions: ExecutionRecord[];
  /** Rounds its trace records (its last turn-end or run-end); null without a trace. */
  rounds: number | null;
}

/** A figure or chart an evidence item cites, e.g. `S1:E3#figure0`. */
export interface DeepVisual {
  /** As the evidence cites it. */
  ref: string;
  subId: string;
  outputId: string;
  kind: 'figure' | 'chart';
  index: number;
  /** Key into `charts` or `figures`. */
  key: string;
  /** The element id of the placed visual. */
  anchor: string;
}

export interface DeepSectionView {
  section: WrittenSection;
  /** The outline's purpose and evidence, when the outline has the section. */
  purpose: string | null;
  evidenceIds: string[];
  html: GroundedAnswer;
  /** Citations `[EV…]` in the text that are not in the evidence bank: shown as text, named in a note. */
  unknownCitations: string[];
  /** Visuals first cited by this section's evidence, placed with it. */
  visuals: DeepVisual[];
}

/** What the report says first: the key findings (citations linked), what could not be answered, the limits. */
export interface DeepSummaryView {
  findings: GroundedAnswer;
  /** The key findings' markdown with citations linked (for report.md). */
  markdown: string;
  cannotAnswer: string[];
  limits: string | null;
}

export interface DeepEvidenceView {
  item: EvidenceItem;
  claim: GroundedAnswer;
  visuals: DeepVisual[];
  /** Sections citing it. */
  citedBy: string[];
}

export interface PreparedDeepReport {
  record: DeepRecord;
  subs: DeepSubView[];
  sections: DeepSectionView[];
  evidence: DeepEvidenceView[];
  /** Keyed by `DeepVisual.key`. */
  charts: ReadonlyMap<string, RenderedChart>;
  figures: ReadonlyMap<string, PreparedFigure>;
  /** Where each placed visual is (a section id), by `DeepVisual.key`. */
  placedIn: ReadonlyMap<string, string>;
  /**
   * A cited visual the same as one placed before (the same chart spec, or the same image, drawn by
   * another sub-analysis or output), by `DeepVisual.key`: shown once, where its twin is.
   */
  twinOf: ReadonlyMap<string, DeepVisual>;
  /**
   * The workspace's profile, from the first sub-analysis trace that holds it (every sub-analysis
   * starts from the run's one profile); null when no sub-analysis ran.
   */
  profile: WorkspaceProfile | null;
  /** Indexes of the brief's questions no sub-analysis researched (`unresearchedQuestions`). */
  unresearched: number[];
  /** Whether the run had ended when the report was made (`deepRunState`). */
  runState: DeepRunState;
  /** The record's summary (key findings grounded and their citations linked), null when it has none. */
  summary: DeepSummaryView | null;
  generatedAt: string;
}

export interface PrepareDeepOptions {
  maxChartRows?: number;
  /** Rasterize charts to PNG (Markdown needs them). Default true. */
  chartPng?: boolean;
  chartPool?: ChartPool;
  signal?: AbortSignal;
  now?: Date;
}

/**
 * A sub-analysis's outcome with its loop's termination when that says more: "incomplete (max-rounds)", but
 * "answered", not "answered (answered)".
 */
export function subOutcomeText(record: Pick<SubAnalysisRecord, 'outcome' | 'termination'>): string {
  return record.termination === null || record.termination === record.outcome
    ? record.outcome
    : `${record.outcome} (${record.termination})`;
}

/**
 * The brief's questions no sub-analysis researched (their indexes): the budget of sub-analyses
 * ran out before them, or theirs was skipped. Known only when the supervisor gave each
 * sub-question as one of the brief's (the offline roles); a model may merge or split them, and
 * then nothing is marked rather than something false.
 */
export function unresearchedQuestions(record: DeepRecord): number[] {
  if (record.brief === null) return [];
  const asked = new Set(record.brief.questions.map((entry) => entry.question));
  const supervised = record.subAnalyses.filter((sub) => sub.round === 0);
  if (supervised.length === 0 || !supervised.every((sub) => asked.has(sub.question))) return [];
  const researched = new Set(
    record.subAnalyses.filter((sub) => sub.outcome !== 'skipped').map((sub) => sub.question),
  );
  return record.brief.questions.flatMap((entry, index) => (researched.has(entry.question) ? [] : [index]));
}

/** Why questions of the brief were not researched, with the flag that researches them (null when a budget was not the cause). */
export interface UnresearchedReason {
  /** Indexes into the brief's questions. */
  questions: number[];
  text: string;
  flag: string | null;
}

/** What the report says of the unresearched questions: how many, and each reason for its own questions. */
export interface UnresearchedNote {
  headline: string;
  reasons: UnresearchedReason[];
}

type UnresearchedCause = 'budget' | 'cancelled' | 'deadline' | 'token-budget' | 'stopped';

function questionNames(indexes: readonly number[]): string {
  const numbers = indexes.map((index) => String(index + 1));
  return numbers.length === 1
    ? `question ${numbers[0]}`
    : `questions ${numbers.slice(0, -1).join(', ')} and ${numbers.at(-1)}`;
}

/**
 * Why the brief's question at `index` was not researched. One the supervisor never queued was left out by
 * the budget of sub-analyses; one whose sub-analysis was skipped, by what the record says stopped it (a
 * record older than `skipReason`: the run's ending, which is what stopped it then).
 */
function unresearchedCause(record: DeepRecord, index: number): UnresearchedCause {
  const question = record.brief?.questions[index]?.question;
  const sub = record.subAnalyses.find((entry) => entry.round === 0 && entry.question === question);
  if (sub === undefined) return 'budget';
  if (sub.skipReason !== undefined) return sub.skipReason;
  const { reason } = record.termination;
  return reason === 'cancelled' || reason === 'deadline' || reason === 'token-budget' ? reason : 'stopped';
}

export function unresearchedNote(report: PreparedDeepReport): UnresearchedNote | null {
  const { brief } = report.record;
  const count = report.unresearched.length;
  if (brief === null || count === 0) return null;
  const total = brief.questions.length;
  const headline = `${count} of the brief's ${total} questions ${count === 1 ? 'was' : 'were'} not researched (${questionNames(report.unresearched)}, marked in the brief).`;
  // Grouped by cause, in the order of the questions: a cancel stopped some, the budget left out others.
  const byCause = new Map<UnresearchedCause, number[]>();
  for (const index of report.unresearched) {
    const cause = unresearchedCause(report.record, index);
    byCause.set(cause, [...(byCause.get(cause) ?? []), index]);
  }
  const reasons = [...byCause].map(([cause, questions]): UnresearchedReason => {
    const one = questions.length === 1;
    const named = questionNames(questions);
    const Named = `${named.charAt(0).toUpperCase()}${named.slice(1)}`;
    const them = one ? 'it' : 'them';
    switch (cause) {
      case 'budget':
        return {
          questions,
          text: `${Named}: the run's budget of sub-analyses was spent before ${them}; to research ${them}, run the analysis again with`,
          flag: `--sub-analyses ${total}`,
        };
      case 'cancelled':
        return { questions, text: `${Named}: the run was cancelled before ${them} started.`, flag: null };
      case 'deadline':
        return { questions, text: `${Named}: the run's deadline came before ${them} started.`, flag: null };
      case 'token-budget':
        return {
          questions,
          text: `${Named}: the run's token budget was spent before ${them} started.`,
          flag: null,
        };
      case 'stopped':
        return { questions, text: `${Named}: the run stopped before ${them} started.`, flag: null };
    }
  });
  return { headline, reasons };
}

/** A reason as one line of text, its flag (when it has one) in `code` as the caller writes it. */
export function unresearchedReasonText(reason: UnresearchedReason, code: (flag: string) => string): string {
  return reason.flag === null ? reason.text : `${reason.text} ${code(reason.flag)}.`;
}

/**
 * Sub-analyses a cancel stopped before their findings were compressed into evidence, with the
 * rounds they had run: "S1 (8 rounds) and S2 (1 round) were cancelled…"; null when there are none.
 * Without it an empty evidence bank read as if nothing had been done.
 */
export function cancelledBeforeCompressing(report: PreparedDeepReport): string | null {
  const stopped = report.subs.filter(
    (sub) => sub.record.outcome === 'cancelled' && sub.record.evidenceIds.length === 0,
  );
  if (stopped.length === 0) return null;
  const named = stopped.map(
    (sub) => `${sub.record.id} (${sub.rounds === null ? 'rounds unknown' : plural(sub.rounds, 'round')})`,
  );
  const list = named.length === 1 ? named[0] : `${named.slice(0, -1).join(', ')} and ${named.at(-1)}`;
  return `${list} ${stopped.length === 1 ? 'was' : 'were'} cancelled before ${stopped.length === 1 ? 'its' : 'their'} findings were compressed into evidence: the cells ${stopped.length === 1 ? 'it' : 'they'} ran are under Sub-analyses.`;
}

/**
 * How the deep run's ending looks, from the title down, as the single report's (`outcome-look.ts`):
 * a cancelled run reads "Cancelled" in the page title, the contents bar, the band and the heading.
 * A report written after its budget of sub-analyses was spent is an answer.
 */
export function deepOutcomePresentation(report: PreparedDeepReport): OutcomePresentation {
  const { termination } = report.record;
  const detail = termination.detail;
  switch (termination.reason) {
    case 'answered':
    case 'max-sub-analyses':
      // Sections written, but the summary names what they could not answer: said from the band down.
      if ((report.record.summary?.cannotAnswer.length ?? 0) > 0)
        return { look: 'incomplete', verdict: 'Partly answered', happened: null, todo: null };
      return { look: 'answered', verdict: '', happened: null, todo: null };
    case 'cancelled': {
      const stopped = cancelledBeforeCompressing(report);
      return {
        look: 'cancelled',
        verdict: 'Cancelled',
        happened: stopped === null ? detail : `${detail} ${stopped}`,
        todo: 'Run the analysis again to get a report; what was done before the cancel is below.',
      };
    }
    case 'deadline':
    case 'token-budget':
      return {
        look: 'incomplete',
        verdict: termination.reason === 'deadline' ? 'Deadline reached' : 'Token budget spent',
        happened: detail,
        todo: `Allow more ${termination.reason === 'deadline' ? 'time (--deadline)' : 'tokens'} or ask a narrower question; the report below was written from what was found by then.`,
      };
    case 'asked':
      return {
        look: 'asked',
        verdict: 'Waiting for a reply',
        happened: detail,
        todo: 'Reply to the question and the analysis goes on.',
      };
    case 'no-data': {
      // Files that are there but damaged need repairing, not putting in the folder.
      const unread = unreadableFiles(report).length;
      return {
        look: 'no-data',
        verdict: 'No data',
        happened: detail,
        todo:
          unread > 0
            ? `${unread === 1 ? 'The data file is' : `The ${unread} data files are`} in the workspace but could not be read (listed under Brief, each with why): repair or export ${unread === 1 ? 'it' : 'them'} again (a workbook saved again by the program that made it, or as CSV), then run the analysis again.`
            : 'Put the data files (CSV, Excel, JSON, SQLite or Parquet) in the workspace folder, or point the analysis at the folder that holds them, and run it again.',
      };
    }
    case 'failed':
      return {
        look: 'failed',
        verdict: 'Failed',
        happened: detail,
        todo: 'Open the sub-analyses below to see what failed, then run again.',
      };
  }
}

/**
 * What the offline analyst's rules did, for the report's "No language model was used" note: only the steps
 * the record shows were taken (a run that found no readable data wrote no brief and ran nothing).
 */
export function offlineRulesText(record: DeepRecord): string {
  const did = [
    record.brief === null ? null : 'wrote the brief',
    record.subAnalyses.some((sub) => sub.startedAt !== null) ? 'ran the sub-analyses' : null,
    record.evidence.length === 0 ? null : 'kept their printed findings as evidence',
    record.sections.length === 0 ? null : 'wrote each section from its evidence only',
  ].filter((step) => step !== null);
  const by = "This deep analysis was made by Datalyst's built-in offline analyst";
  if (did.length === 0)
    return `${by} (deterministic rules); it ended before its rules wrote a brief, so nothing was researched.`;
  const steps = did.length === 1 ? did[0] : `${did.slice(0, -1).join(', ')} and ${did.at(-1)}`;
  return `${by}: deterministic rules ${steps}.`;
}

/** The anchor of an output of a sub-analysis (`S2:E4`) in the deep report. */
export function deepOutputAnchor(citedOutput: string): string {
  return outputAnchor(citedOutput);
}

export function evidenceAnchor(evidenceId: string): string {
  return `evidence-${evidenceId.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

export function subAnchor(subId: string): string {
  return `sub-${subId.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

export function sectionAnchor(sectionId: string): string {
  return `section-${sectionId.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

/**
 * `[EV3]` becomes a link to the evidence when the bank has it; other citations stay text. Citations in a
 * row (`[EV3][EV11]`) are each linked: only a link already (`[EV3](…)`) or a reference link to another
 * label (`[EV3][note]`) is left as written.
 */
export function linkCitations(
  markdown: string,
  known: ReadonlySet<string>,
): { markdown: string; unknown: string[] } {
  const unknown = new Set<string>();
  const linked = markdown.replace(/\[(EV\d+)\](?!\()(?!\[(?!EV\d+\]))/g, (match, id: string) => {
    if (!known.has(id)) {
      unknown.add(id);
      return match;
    }
    return `[${id}](#${evidenceAnchor(id)})`;
  });
  return { markdown: linked, unknown: [...unknown] };
}

/** Sub-analysis folders come from the record: only plain relative paths inside the deep run's folder are read. */
function isSafeSubPath(path: string): boolean {
  if (path === '' || isAbsolute(path) || path.includes('\0')) return false;
  const normalized = normalize(path);
  return !normalized.startsWith('..') && !normalized.split(sep).includes('..');
}

async function traceFile(dir: string): Promise<string | null> {
  for (const name of ['trace.jsonl', 'trace.json']) {
    const candidate = join(dir, name);
    if (
      await stat(candidate).then(
        (found) => found.isFile(),
        () => false,
      )
    )
      return candidate;
  }
  return null;
}

async function readSub(
  runDir: string,
  record: SubAnalysisRecord,
  signal?: AbortSignal,
): Promise<DeepSubView> {
  const empty = { record, records: null, executions: [], rounds: null };
  if (record.runDir === null) return { ...empty, traceNote: null };
  if (!isSafeSubPath(record.runDir))
    return { ...empty, traceNote: 'Its folder is not inside the deep run folder, so it was not read.' };
  const path = await traceFile(join(runDir, record.runDir));
  if (path === null) return { ...empty, traceNote: 'Its folder holds no trace.' };
  try {
    const { records } = await readTrace(path, signal ? { signal } : {});
    const executions = records.filter((entry): entry is ExecutionRecord => entry.type === 'execution');
    const ends = records.filter((entry) => entry.type === 'turn-end' || entry.type === 'run-end');
    const last = ends.at(-1);
    return { record, records, executions, rounds: last === undefined ? null : last.rounds, traceNote: null };
  } catch (error) {
    return {
      ...empty,
      traceNote: `Its trace could not be read: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}

function visual(subId: string, outputId: string, kind: 'figure' | 'chart', index: number): DeepVisual {
  const local = kind === 'chart' ? chartKey(outputId, index) : figureKey(outputId, index);
  const key = `${subId}:${local}`;
  return {
    ref: `${subId}:${outputId}#${kind}${index}`,
    subId,
    outputId,
    kind,
    index,
    key,
    anchor: `visual-${key.replace(/[^A-Za-z0-9_-]/g, '_')}`,
  };
}

/** Where a visual is shown with a section: itself, or the twin shown in its place; null when it is not. */
export function placedVisual(report: PreparedDeepReport, visual: DeepVisual): DeepVisual | null {
  const twin = report.twinOf.get(visual.key);
  if (twin !== undefined) return twin;
  return report.placedIn.has(visual.key) ? visual : null;
}

/** A cited visual, `S1:E3#figure0`; null when the text is not one. */
export function parseVisual(ref: string): DeepVisual | null {
  const match = /^(S\d+):(E\d+)#(figure|chart)(\d+)$/.exec(ref);
  if (match === null) return null;
  const [, subId = '', outputId = '', kind = 'figure', index = '0'] = match;
  return visual(subId, outputId, kind === 'chart' ? 'chart' : 'figure', Number(index));
}

/** Every chart, then every figure, of one output of a sub-analysis. */
export function visualsOfExecution(subId: string, execution: ExecutionRecord): DeepVisual[] {
  return [
    ...execution.result.charts.map((_chart, index) => visual(subId, execution.outputId, 'chart', index)),
    ...execution.result.figures.map((_figure, index) => visual(subId, execution.outputId, 'figure', index)),
  ];
}

async function drawCharts(
  subs: readonly DeepSubView[],
  options: PrepareDeepOptions,
): Promise<Map<string, RenderedChart>> {
  const jobs = subs.flatMap((sub) =>
    sub.executions.flatMap((execution) =>
      execution.result.charts.flatMap((chart, index) =>
        'omitted' in chart
          ? []
          : [{ key: `${sub.record.id}:${chartKey(execution.outputId, index)}`, spec: chart.spec }],
      ),
    ),
  );
  const pool = options.chartPool ?? sharedChartPool();
  const drawn = await Promise.all(
    jobs.map((job) =>
      pool.render(job.spec, {
        png: options.chartPng ?? true,
        ...(options.maxChartRows === undefined ? {} : { maxRows: options.maxChartRows }),
        ...(options.signal ? { signal: options.signal } : {}),
      }),
    ),
  );
  return new Map(jobs.map((job, index) => [job.key, drawn[index] as RenderedChart]));
}

function workspaceProfileOf(subs: readonly DeepSubView[]): WorkspaceProfile | null {
  for (const sub of subs) {
    const found = sub.records?.find((entry) => entry.type === 'workspace-profile');
    if (found?.type === 'workspace-profile') return found.profile;
  }
  return null;
}

/**
 * The workspace's files that could not be read, with the reader's error: as
 * the run recorded them when it profiled the workspace (so a run stopped
 * before any sub-analysis names them too), or, for a deep.json older than
 * that record, from the profile in a sub-analysis trace.
 */
export function unreadableFiles(report: PreparedDeepReport): Array<{ path: string; error: string }> {
  return (
    report.record.unreadableFiles ??
    (report.profile?.files ?? []).flatMap((file) =>
      file.error === null ? [] : [{ path: file.path, error: file.error }],
    )
  );
}

/**
 * Whether the run had ended when its record was read: `ended`; `running` (its process, on this machine,
 * is alive); `stopped` (its process is gone: a second Ctrl-C, a kill, a crash); `unknown` (a record
 * older than `owner`, or written on another machine).
 */
export type DeepRunState = 'ended' | 'running' | 'stopped' | 'unknown';

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function deepRunState(
  record: DeepRecord,
  isAlive: (pid: number) => boolean = processAlive,
): DeepRunState {
  if (record.endedAt !== null) return 'ended';
  if (record.owner === undefined || record.owner.host !== hostname()) return 'unknown';
  return isAlive(record.owner.pid) ? 'running' : 'stopped';
}

/**
 * The record as the report tells it: one that never ended says whether the run is still going or was
 * stopped (rather than "still going (or its process died)"), and a stopped run's sub-analyses that were
 * running say they were stopped, those never started that they were not run.
 */
function recordAsOf(record: DeepRecord, state: DeepRunState): DeepRecord {
  const owner = record.owner;
  if (owner === undefined || (state !== 'stopped' && state !== 'running')) return record;
  if (state === 'running')
    return {
      ...record,
      termination: {
        reason: 'cancelled',
        detail: `The run is still going (process ${owner.pid}): this report shows what it had recorded so far; render it again when the run ends.`,
      },
    };
  return {
    ...record,
    termination: {
      reason: 'cancelled',
      detail: `The run was stopped before it ended (its process, ${owner.pid}, is gone: quit at once or killed). What it had recorded by then is below.`,
    },
    subAnalyses: record.subAnalyses.map((sub) => {
      if (sub.endedAt !== null) return sub;
      if (sub.startedAt !== null)
        return { ...sub, outcome: 'cancelled', detail: 'The run was stopped while it ran.' };
      return sub.outcome === 'skipped' && sub.detail === ''
        ? { ...sub, detail: 'Not run: the run was stopped first.', skipReason: 'cancelled' as const }
        : sub;
    }),
  };
}

/** Reads a deep run folder and prepares its report. Throws TraceError when the folder holds no `deep.json`. */
export async function prepareDeepReport(
  runDir: string,
  options: PrepareDeepOptions = {},
): Promise<PreparedDeepReport> {
  const written = await readDeepRecord(runDir);
  if (written === null)
    throw new TraceError(`The folder ${runDir} holds no deep.json: it is not a deep analysis run.`);
  const runState = deepRunState(written);
  const record = recordAsOf(written, runState);
  const subs = await Promise.all(record.subAnalyses.map((sub) => readSub(runDir, sub, options.signal)));
  const drawing = drawCharts(subs, options);
  drawing.catch(() => undefined);

  const figures = new Map<string, PreparedFigure>();
  const executionOf = new Map<string, ExecutionRecord>();
  for (const sub of subs) {
    for (const [key, figure] of decodeFigures(sub.executions)) figures.set(`${sub.record.id}:${key}`, figure);
    for (const execution of sub.executions)
      executionOf.set(`${sub.record.id}:${execution.outputId}`, execution);
  }
  const indexOf = (outputs: readonly string[]) =>
    buildNumberIndex(
      [...new Set(outputs)].flatMap((output) => {
        const execution = executionOf.get(output);
        const source = execution === undefined ? undefined : groundingSources([execution])[0];
        return source === undefined ? [] : [{ ...source, outputId: output }];
      }),
    );

  const known = new Set(record.evidence.map((item) => item.id));
  const byId = new Map(record.evidence.map((item) => [item.id, item]));
  const placedIn = new Map<string, string>();
  // What a visual shows, to place the same chart or image once however many outputs drew it.
  const contentOf = (visual: DeepVisual): string | null => {
    if (visual.kind === 'chart') {
      const chart = executionOf.get(`${visual.subId}:${visual.outputId}`)?.result.charts[visual.index];
      return chart === undefined || 'omitted' in chart ? null : `chart:${JSON.stringify(chart.spec)}`;
    }
    const figure = figures.get(visual.key);
    return figure === undefined ? null : `figure:${figure.widthPx}x${figure.heightPx}:${figure.base64}`;
  };
  const placedByContent = new Map<string, DeepVisual>();
  const twinOf = new Map<string, DeepVisual>();
  const sections: DeepSectionView[] = record.sections.map((section) => {
    const outline = record.outline?.sections.find((entry) => entry.id === section.id);
    const evidenceIds = outline?.evidenceIds ?? section.citedEvidenceIds;
    const given = evidenceIds.flatMap((id) => byId.get(id) ?? []);
    const { markdown, unknown } = linkCitations(section.markdown, known);
    const visuals: DeepVisual[] = [];
    for (const item of given) {
      for (const ref of item.figures) {
        const cited = parseVisual(ref);
        if (cited === null || placedIn.has(cited.key) || twinOf.has(cited.key)) continue;
        const content = contentOf(cited);
        const twin = content === null ? undefined : placedByContent.get(content);
        if (twin !== undefined) {
          twinOf.set(cited.key, twin);
          continue;
        }
        placedIn.set(cited.key, section.id);
        if (content !== null) placedByContent.set(content, cited);
        visuals.push(cited);
      }
    }
    return {
      section,
      purpose: outline?.purpose ?? null,
      evidenceIds,
      html: renderGroundedAnswer(markdown, indexOf(given.flatMap((item) => item.outputs)), deepOutputAnchor),
      unknownCitations: unknown,
      visuals,
    };
  });
  let summary: DeepSummaryView | null = null;
  if (record.summary !== undefined) {
    const { markdown } = linkCitations(record.summary.keyFindings, known);
    const cited = [...record.summary.keyFindings.matchAll(/\[(EV\d+)\]/g)].flatMap(
      (match) => byId.get(match[1] ?? '') ?? [],
    );
    summary = {
      findings: renderGroundedAnswer(
        markdown,
        indexOf(cited.flatMap((item) => item.outputs)),
        deepOutputAnchor,
      ),
      markdown,
      cannotAnswer: record.summary.cannotAnswer,
      limits: record.summary.limits,
    };
  }
  const evidence: DeepEvidenceView[] = record.evidence.map((item) => ({
    item,
    claim: renderGroundedAnswer(item.claim, indexOf(item.outputs), deepOutputAnchor),
    visuals: item.figures.flatMap((ref) => parseVisual(ref) ?? []),
    citedBy: sections.filter((view) => view.evidenceIds.includes(item.id)).map((view) => view.section.id),
  }));
  return {
    record,
    subs,
    sections,
    evidence,
    charts: await drawing,
    figures,
    placedIn,
    twinOf,
    profile: workspaceProfileOf(subs),
    unresearched: unresearchedQuestions(record),
    runState,
    summary,
    generatedAt: (options.now ?? new Date()).toISOString(),
  };
}
