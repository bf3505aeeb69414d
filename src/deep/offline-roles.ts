import { createOfflineAnalyst, OFFLINE_ANALYST_ID } from '../agent/index.ts';
import type { LanguageModel, OfflineAnalystOptions } from '../agent/index.ts';
import { plainFileError, readFindings, stageOfCode } from '../agent/offline-analyst/index.ts';
import type { OfflineAnalystStage } from '../agent/offline-analyst/index.ts';
import type { ColumnProfile, WorkspaceProfile } from '../sandbox/index.ts';
import type { ExecutionRecord } from '../trace/index.ts';
import type {
  CompressInput,
  DeepRoles,
  EvidenceDraft,
  OutlineDraft,
  PlanInput,
  ScopeInput,
  SubQuestionDraft,
  SummarizeInput,
  SuperviseInput,
  WriteInput,
} from './deep-roles.ts';
import type { Brief, EvidenceItem, OutlineSection, SubQuestion } from './deep-schema.ts';
import { offlineSummary } from './offline-summary.ts';
import {
  askedKindOf,
  kindAbout,
  kindOfTitle,
  kindTitle,
  questionFocus,
  relevance,
  saysKind,
  type QuestionFocus,
  type QuestionKind,
} from './question-focus.ts';

/**
 * The offline analyst's deep analysis: every role is a rule, so the same
 * workspace gives the same brief, sub-questions, evidence, outline and text.
 *
 * - scope: one question per theme of the workspace profile — how the tables
 *   that share a key relate (when at least three do), each table with values
 *   of its own, the one-column lists together, and the files the profile
 *   could not read (each named with why). Tables that repeat
 *   another's name, columns and row count (the same data as CSV, Excel and
 *   SQLite) are named once.
 * - supervise: the brief's questions in order, at most `maxSubAnalyses`.
 * - sub-analyst: the offline analyst studying only the sub-question's tables; only the user's
 *   instruction may name columns for it to break down (the sub-question is a template).
 * - compress: the `Findings:` lines its cells printed, one evidence draft
 *   each, citing the output that printed it and that output's figures and
 *   charts (no follow-up question: the findings are already compressed).
 * - plan: "The data" (shapes, missing values), a section per theme (every
 *   sub-analysis with evidence has one, or the join's), and how the tables
 *   relate last; it never sends sub-analysts after gaps (rules
 *   cannot ask a better question than the brief did).
 * - write: each claim copied verbatim with its `[EV3]`, so every number in a
 *   section is one its evidence printed.
 */
export interface OfflineDeepRolesOptions {
  /** Sub-analyses the supervisor asks for at most (the engine's own budget may be lower). Default 4. */
  maxSubAnalyses?: number;
  /** Evidence drafts per sub-analysis at most. Default 10. */
  maxEvidencePerSubAnalysis?: number;
  /** Limits of every sub-analyst (its `focusTables` come from its sub-question). */
  analyst?: Omit<OfflineAnalystOptions, 'focusTables'>;
}

const DEFAULT_MAX_SUB_ANALYSES = 4;
const DEFAULT_MAX_EVIDENCE = 10;
/** Findings about the tables' shape go to "The data"; at most this many per sub-analysis. */
const MAX_DATA_EVIDENCE = 4;

// The brief's questions are written from these templates; the outline recognises its themes by them.
const crossPrefix = 'How do the tables that share a key column relate';
const valuePrefix = 'What does ';
const listsPrefix = 'What do the one-column lists';
const unreadablePrefix = 'Which files could not be read';

/** Steps whose findings describe the data's shape rather than answer a question. */
const dataStages: ReadonlySet<OfflineAnalystStage> = new Set(['load', 'load-fallback', 'overview']);
/** Which findings to keep first when a sub-analysis printed more than its share. */
const stagePriority: Readonly<Record<OfflineAnalystStage, number>> = {
  focus: 0,
  correlations: 1,
  relations: 2,
  time: 3,
  categories: 4,
  distributions: 5,
  outliers: 6,
  overview: 7,
  load: 8,
  'load-fallback': 9,
  setup: 10,
  prepare: 10,
  registry: 10,
};

interface DistinctTable {
  /** How the brief names it: the file, or `file#table` when the file holds several. */
  ref: string;
  columns: readonly ColumnProfile[];
  rows: number;
}

/** What compress learned about a sub-analysis, for the outline: its question and the step behind each claim. */
interface SubAnalysisNote {
  subQuestion: SubQuestion;
  stageOfClaim: Map<string, OfflineAnalystStage>;
}

export function createOfflineDeepRoles(options: OfflineDeepRolesOptions = {}): DeepRoles {
  const maxSubAnalyses = Math.max(0, Math.floor(options.maxSubAnalyses ?? DEFAULT_MAX_SUB_ANALYSES));
  const maxEvidence = Math.max(1, Math.floor(options.maxEvidencePerSubAnalysis ?? DEFAULT_MAX_EVIDENCE));
  // Filled by compress, read by plan: the engine compresses every sub-analysis before it plans.
  const notes = new Map<string, SubAnalysisNote>();
  // Set by scope: the user's words, the only ones that may name columns (the sub-questions are templates),
  // and what they ask for, which orders the findings kept, the outline and its sections.
  let instruction: string | null = null;
  let focus: QuestionFocus | null = null;
  return {
    modelId: OFFLINE_ANALYST_ID,
    offline: true,
    scope: (input: ScopeInput) => {
      instruction = input.question;
      focus = questionFocus(input.question);
      return Promise.resolve({ brief: offlineBrief(input.question, input.profile) });
    },
    supervise: (input: SuperviseInput) =>
      Promise.resolve(offlineSubQuestions(input.brief, Math.min(maxSubAnalyses, input.maxSubAnalyses))),
    subAnalystModel: (subQuestion: SubQuestion): LanguageModel =>
      createOfflineAnalyst({
        ...options.analyst,
        focusTables: subQuestion.tables,
        ...(instruction === null ? {} : { columnWords: instruction }),
      }),
    compress: (input: CompressInput) => {
      const chosen = chooseFindings(input.executions, maxEvidence, input.subQuestion.tables, focus);
      notes.set(input.subQuestion.id, {
        subQuestion: input.subQuestion,
        stageOfClaim: new Map(chosen.map((finding) => [finding.claim, finding.stage])),
      });
      return Promise.resolve(
        chosen.map(({ claim, outputs, figures }): EvidenceDraft => ({ claim, outputs, figures })),
      );
    },
    plan: (input: PlanInput) =>
      Promise.resolve(offlineOutline(input.evidence, notes, focus ?? questionFocus(input.brief.question))),
    write: (input: WriteInput) => Promise.resolve(offlineSection(input)),
    summarize: (input: SummarizeInput) =>
      Promise.resolve(offlineSummary(input, focus ?? questionFocus(input.brief.question))),
  };
}

/** "a, b and c". */
function listText(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

function fileStem(filePath: string): string {
  const base = filePath.split('/').at(-1) ?? filePath;
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(0, dot) : base;
}

/** Every table of the profile once, in profile order: a table that repeats another's name, columns and row count is the same data. */
export function distinctTables(profile: WorkspaceProfile): DistinctTable[] {
  const seen = new Set<string>();
  const tables: DistinctTable[] = [];
  // Files of one table first: of the same data as CSV and as a SQLite table, the CSV is the one named.
  const files = [...profile.files].sort((a, b) => Number(a.tables.length > 1) - Number(b.tables.length > 1));
  for (const file of files) {
    for (const table of file.tables) {
      const single = file.tables.length === 1;
      const stem = (single ? fileStem(file.path) : table.name).toLowerCase();
      const key = JSON.stringify([stem, table.columns.map((column) => column.name), table.rows]);
      if (seen.has(key)) continue;
      seen.add(key);
      tables.push({
        ref: single ? file.path : `${file.path}#${table.name}`,
        columns: table.columns,
        rows: table.rows,
      });
    }
  }
  return tables;
}

/** The column most distinct tables share, when at least three do (the analyst joins them then). */
function sharedKey(tables: readonly DistinctTable[]): { column: string; tables: DistinctTable[] } | null {
  const holders = new Map<string, DistinctTable[]>();
  for (const table of tables) {
    for (const column of new Set(table.columns.map((entry) => entry.name))) {
      holders.set(column, [...(holders.get(column) ?? []), table]);
    }
  }
  const best = [...holders.entries()]
    .filter(([, holding]) => holding.length >= 3)
    .sort(([a, left], [b, right]) => right.length - left.length || a.localeCompare(b))[0];
  return best === undefined ? null : { column: best[0], tables: best[1] };
}

/** A file the profile could not read, with why in plain words. */
export interface UnreadableFile {
  path: string;
  reason: string;
}

/** The files of the profile that could not be read, in profile order ("not profiled" is no reading: the profile as a whole failed). */
export function unreadableFiles(profile: WorkspaceProfile): UnreadableFile[] {
  return profile.files
    .filter((file) => file.tables.length === 0 && file.error !== null && file.error !== 'not profiled')
    .map((file) => ({ path: file.path, reason: plainFileError(file.error ?? '') }));
}

/** Step 1: one question per theme of the profile. Never asks the user first (no model to judge the answer). */
export function offlineBrief(question: string, profile: WorkspaceProfile): Brief {
  const tables = distinctTables(profile);
  const questions: Brief['questions'] = [];
  const key = sharedKey(tables);
  if (key !== null) {
    questions.push({
      question: `${crossPrefix} when they are joined on it: which properties go together?`,
      tables: key.tables.map((table) => table.ref),
    });
  }
  const valued = tables
    .filter((table) => table.columns.length >= 2)
    .sort((a, b) => b.columns.length - a.columns.length || b.rows - a.rows || a.ref.localeCompare(b.ref));
  // A question that asks for kinds of finding (a trend, how clean the data is) asks each table for those first.
  const asked = questionFocus(question).kinds;
  const about = asked.length === 0 ? '' : listText(asked.map(kindAbout));
  for (const table of valued) {
    questions.push({
      question:
        asked.length === 0
          ? `${valuePrefix}${table.ref} show: how are its values distributed, how do its categories split, and what goes with what?`
          : `${valuePrefix}${table.ref} show about ${about}?`,
      tables: [table.ref],
    });
  }
  const lists = tables.filter((table) => table.columns.length === 1);
  if (lists.length > 0) {
    questions.push({
      question: `${listsPrefix} (${lists.map((table) => table.ref).join(', ')}) say about the rows they mark?`,
      tables: lists.map((table) => table.ref),
    });
  }
  // The files that could not be read are this question's tables, so the brief names them; why each failed is
  // the report's list of them (from the profile), not repeated in the question. Last: the budget goes to the
  // tables first, and a tolerant reader only tells the user more when it reads what the profile could not.
  const unreadable = unreadableFiles(profile);
  if (unreadable.length > 0) {
    questions.push({
      question: `${unreadablePrefix}, and can a tolerant reader read them?`,
      tables: unreadable.map((file) => file.path),
    });
  }
  if (questions.length === 0) {
    questions.push({
      question: 'What do the files of the workspace contain, and can they be read?',
      tables: [],
    });
  }
  return {
    question,
    questions,
    goodAnswer:
      (asked.length === 0
        ? 'For each question: '
        : `First the findings the question asks for (${about}); then, for each question: `) +
      'what its tables hold (rows, columns, missing values), how their values are ' +
      'distributed, which categories dominate and which columns go together, each stated with the numbers ' +
      'the analysis printed and citing its evidence; a table repeated in another format is named once; ' +
      (unreadable.length > 0 ? 'each file that could not be read is named with why; ' : '') +
      'nothing is claimed that no output shows, and correlations are not called causes.',
  };
}

/** Step 2: the brief's questions in order, at most `maxSubAnalyses`. */
export function offlineSubQuestions(brief: Brief, maxSubAnalyses: number): SubQuestionDraft[] {
  return brief.questions
    .slice(0, Math.max(0, maxSubAnalyses))
    .map((entry) => ({ question: entry.question, tables: [...entry.tables] }));
}

interface ChosenFinding {
  claim: string;
  stage: OfflineAnalystStage;
  outputs: string[];
  figures: string[];
  order: number;
  /** How much it answers what the question asked (`relevance`); 0 for a question that asks nothing in particular. */
  relevance: number;
}

/** What a chart's spec says it shows: its title and its encodings' fields and titles, not its data. */
function chartText(spec: unknown): string {
  if (typeof spec !== 'object' || spec === null) return '';
  const { title, encoding } = spec as { title?: unknown; encoding?: unknown };
  return JSON.stringify([title ?? null, encoding ?? null]).toLowerCase();
}

/** The columns a finding names in backticks (not its files and tables), as written. */
function columnsNamed(claim: string): string[] {
  return [...claim.matchAll(/`([^`]+)`/g)]
    .map((match) => match[1] ?? '')
    .filter((name) => name !== '' && !/\.\w{2,5}\b/.test(name));
}

/**
 * The figures and charts an output drew that may show a finding, as the evidence cites them
 * (`E7#figure0`): every figure (an image says nothing of what it shows), and the charts whose spec names a
 * column the finding names (the categories step draws one chart per column: `region`'s chart is no
 * figure of the `channel` finding), or every chart when the finding names none.
 */
function visualsOf(execution: ExecutionRecord, claim: string): string[] {
  const visuals: string[] = [];
  execution.result.figures.forEach((figure, index) => {
    if (!('omitted' in figure)) visuals.push(`${execution.outputId}#figure${index}`);
  });
  const columns = columnsNamed(claim).map((name) => name.toLowerCase());
  execution.result.charts.forEach((chart, index) => {
    if ('omitted' in chart) return;
    const text = chartText(chart.spec);
    // A whole name, not a part of another ("f" is in every title).
    const names = (column: string) =>
      new RegExp(
        `(^|[^\\p{L}\\p{N}_])${column.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[^\\p{L}\\p{N}_])`,
        'u',
      ).test(text);
    if (columns.length > 0 && !columns.some(names)) return;
    visuals.push(`${execution.outputId}#chart${index}`);
  });
  return visuals;
}

/**
 * Whether a finding names one of `tables` (as the analyst prints a table: `file` or `file [table]` in
 * backticks, a path clipped at 60 characters). With no tables, every finding is the sub-analysis's own.
 */
function namesTable(claim: string, tables: readonly string[]): boolean {
  return (
    tables.length === 0 ||
    tables.some((table) => claim.includes('`' + (table.split('#')[0] ?? table).slice(0, 59)))
  );
}

/**
 * Compress: the findings the cells printed, each citing its output. A
 * sub-analysis keeps at most `maxEvidence`: first those that answer what the
 * question asked (`focus`: the kinds of finding it names, its columns, its
 * words; the most relevant first), never crowded out by the rest; then a few
 * about the data's shape (its own tables' before the workspace's other files,
 * which another section states); then the rest by how much they say (a
 * breakdown the question asked for, then relationships, time, categories,
 * distributions, outliers). Kept in the order printed. A question about how
 * clean the data is keeps the load step's reading notes (encoding, preamble,
 * hidden sheets, footer lines), which are otherwise the overview's repeat.
 */
export function chooseFindings(
  executions: readonly ExecutionRecord[],
  maxEvidence: number,
  tables: readonly string[] = [],
  focus: QuestionFocus | null = null,
): ChosenFinding[] {
  const all: ChosenFinding[] = [];
  const overviewPrinted = executions.some(
    (execution) =>
      stageOfCode(execution.code) === 'overview' && readFindings(execution.result.stdout.text).length > 0,
  );
  const asksQuality = focus?.kinds.includes('quality') === true;
  for (const execution of executions) {
    const stage = stageOfCode(execution.code);
    // A failed cell's findings may be half printed; a cell the analyst did not write has none.
    if (stage === null || execution.result.status !== 'ok') continue;
    for (const finding of new Set(readFindings(execution.result.stdout.text))) {
      // The overview repeats each table's shape with its kinds: the load step's list is then redundant,
      // but for its reading notes when the question asks how clean the data is.
      if (stage === 'load' && overviewPrinted && !(asksQuality && saysKind('quality', finding))) continue;
      if (all.some((chosen) => chosen.claim === finding)) continue;
      all.push({
        claim: finding,
        stage,
        outputs: [execution.outputId],
        figures: visualsOf(execution, finding),
        order: all.length,
        relevance: focus === null ? 0 : relevance(focus, finding, stage),
      });
    }
  }
  const asked = all
    .filter((finding) => finding.relevance > 0)
    .sort(
      (a, b) =>
        b.relevance - a.relevance || stagePriority[a.stage] - stagePriority[b.stage] || a.order - b.order,
    )
    .slice(0, maxEvidence);
  const others = all.filter((finding) => finding.relevance === 0);
  const data = others
    .filter((finding) => dataStages.has(finding.stage))
    .sort(
      (a, b) =>
        Number(namesTable(b.claim, tables)) - Number(namesTable(a.claim, tables)) || a.order - b.order,
    )
    .slice(0, Math.max(0, Math.min(MAX_DATA_EVIDENCE, maxEvidence - asked.length)));
  const rest = others
    .filter((finding) => !dataStages.has(finding.stage))
    .sort((a, b) => stagePriority[a.stage] - stagePriority[b.stage] || a.order - b.order)
    .slice(0, Math.max(0, maxEvidence - asked.length - data.length));
  return [...asked, ...data, ...rest].sort((a, b) => a.order - b.order);
}

type ThemeKind = 'cross' | 'value' | 'lists' | 'unreadable' | 'other';

function themeKind(question: string): ThemeKind {
  if (question.startsWith(crossPrefix)) return 'cross';
  if (question.startsWith(listsPrefix)) return 'lists';
  if (question.startsWith(unreadablePrefix)) return 'unreadable';
  if (question.startsWith(valuePrefix)) return 'value';
  return 'other';
}

function themeTitle(subQuestion: SubQuestion): string {
  switch (themeKind(subQuestion.question)) {
    case 'cross':
      return 'How the tables relate';
    case 'lists':
      return 'The one-column lists';
    case 'unreadable':
      return 'The files that could not be read';
    case 'value':
      return subQuestion.tables[0] ?? subQuestion.question;
    case 'other': {
      const line = subQuestion.question.split('\n')[0] ?? '';
      return line.length > 80 ? `${line.slice(0, 79)}…` : line;
    }
  }
}

/** A claim as compared for repeats: its words, whatever the line breaks and spaces. */
function claimWords(claim: string): string {
  return claim.replace(/\s+/g, ' ').trim();
}

/**
 * Step 4: first a section for each kind of finding the question asks for (a trend, how the groups
 * compare, how clean the data is…), in the order it names them, each holding the findings of every
 * sub-analysis of that kind, the most relevant first; then "The data", a section per theme in the order
 * of the sub-analyses, how the tables relate last. A question that asks for nothing in particular gets
 * only the latter. Every sub-analysis with evidence gets a place: one whose findings are all about its
 * data's shape (a small table, unreadable files) has them in a section of its own rather than none. A
 * claim that repeats an earlier one word for word goes to the earlier one's section, where it is written
 * once.
 */
export function offlineOutline(
  evidence: readonly EvidenceItem[],
  notes: ReadonlyMap<string, SubAnalysisNote>,
  focus: QuestionFocus = questionFocus(''),
): OutlineDraft {
  const data: EvidenceItem[] = [];
  const cross: string[] = [];
  const themes = new Map<string, { title: string; purpose: string; evidenceIds: string[] }>();
  const asked = new Map<QuestionKind, string[]>(focus.kinds.map((kind) => [kind, []]));
  /** Each item's relevance to the question, and the first item of its claim (a repeat stays beside it). */
  const relevanceOf = new Map<string, number>();
  const leaderOf = new Map<string, string>();
  // Where each claim went, and the ids that said it: a repeat goes right after them, in the same section.
  const sectionOfClaim = new Map<string, { section: string[]; ids: string[] }>();
  const placeRepeat = (item: EvidenceItem): boolean => {
    const earlier = sectionOfClaim.get(claimWords(item.claim));
    if (earlier === undefined) return false;
    const last = earlier.ids.at(-1) ?? '';
    earlier.section.splice(earlier.section.indexOf(last) + 1, 0, item.id);
    leaderOf.set(item.id, earlier.ids[0] ?? item.id);
    earlier.ids.push(item.id);
    return true;
  };
  const place = (item: EvidenceItem, section: string[]): void => {
    section.push(item.id);
    sectionOfClaim.set(claimWords(item.claim), { section, ids: [item.id] });
  };
  const themeOf = (subAnalysisId: string) => {
    const note = notes.get(subAnalysisId);
    const theme = themes.get(subAnalysisId) ?? {
      title: note === undefined ? `Findings of ${subAnalysisId}` : themeTitle(note.subQuestion),
      purpose: note === undefined ? 'What this sub-analysis found.' : `Answer: ${note.subQuestion.question}`,
      evidenceIds: [],
    };
    themes.set(subAnalysisId, theme);
    return theme.evidenceIds;
  };
  // A table's sub-analysis also prints the workspace's inventory (which files were read, which could not be
  // and why): no claim about its tables, and the same in every sub-analysis. It is written where the reader
  // looks for those files: the section of the files that could not be read, or else "The data".
  const otherFiles: EvidenceItem[] = [];
  const withOwnEvidence = new Set<string>();
  // Sub-analyses with findings in a section of what the question asked: they have a place.
  const answering = new Set<string>();
  // Which claims a sub-analysis of its own tables (not the join) printed: the first one that did.
  const singleTableSaid = new Map<string, string>();
  for (const item of evidence) {
    const question = notes.get(item.subAnalysisId)?.subQuestion.question ?? '';
    if (themeKind(question) === 'cross' || singleTableSaid.has(claimWords(item.claim))) continue;
    singleTableSaid.set(claimWords(item.claim), item.subAnalysisId);
  }
  for (const item of evidence) {
    if (placeRepeat(item)) continue;
    const note = notes.get(item.subAnalysisId);
    const stage = note?.stageOfClaim.get(item.claim);
    const kind = stage === undefined ? null : askedKindOf(focus, item.claim, stage);
    if (stage !== undefined) relevanceOf.set(item.id, relevance(focus, item.claim, stage));
    if (kind !== null) {
      place(item, asked.get(kind) ?? []);
      answering.add(item.subAnalysisId);
      continue;
    }
    if (stage !== undefined && dataStages.has(stage)) {
      const aboutOtherFiles =
        note !== undefined &&
        themeKind(note.subQuestion.question) !== 'unreadable' &&
        !namesTable(item.claim, note.subQuestion.tables);
      (aboutOtherFiles ? otherFiles : data).push(item);
      if (!aboutOtherFiles) withOwnEvidence.add(item.subAnalysisId);
      continue;
    }
    withOwnEvidence.add(item.subAnalysisId);
    const kindOfTheme = note === undefined ? 'other' : themeKind(note.subQuestion.question);
    // The join's finding that a single table's sub-analysis printed too is about that table alone
    // ("`month` differs by `school`", both of enrolled.csv): it goes under that table, not how the tables relate.
    const single = singleTableSaid.get(claimWords(item.claim));
    if (kindOfTheme === 'cross' && stage !== 'relations' && single !== undefined) {
      place(item, themeOf(single));
      continue;
    }
    place(item, kindOfTheme === 'cross' || stage === 'relations' ? cross : themeOf(item.subAnalysisId));
  }
  // One that printed nothing but the inventory keeps it, as one that found only its data's shape does.
  data.push(...otherFiles.filter((item) => !withOwnEvidence.has(item.subAnalysisId)));
  // A sub-analysis (other than the join, whose place is "How the tables relate") that found only the shape
  // of its data keeps it in its own section: researched, it is not left out of the outline.
  const dataOnly = new Set(
    data
      .map((item) => item.subAnalysisId)
      .filter(
        (id) =>
          !themes.has(id) &&
          !answering.has(id) &&
          themeKind(notes.get(id)?.subQuestion.question ?? '') !== 'cross',
      ),
  );
  const dataIds: string[] = [];
  for (const item of data) {
    if (placeRepeat(item)) continue;
    place(item, dataOnly.has(item.subAnalysisId) ? themeOf(item.subAnalysisId) : dataIds);
  }
  const unreadableSection = [...themes].find(
    ([id]) => themeKind(notes.get(id)?.subQuestion.question ?? '') === 'unreadable',
  )?.[1].evidenceIds;
  for (const item of otherFiles.filter((entry) => withOwnEvidence.has(entry.subAnalysisId))) {
    if (placeRepeat(item)) continue;
    place(item, unreadableSection ?? dataIds);
  }
  const sections: OutlineDraft['sections'] = [];
  // What the question asked for first, each section's most relevant findings first (a repeat beside its first).
  const rank = (id: string) => relevanceOf.get(leaderOf.get(id) ?? id) ?? 0;
  const position = new Map(evidence.map((item, index) => [item.id, index]));
  const at = (id: string) => position.get(leaderOf.get(id) ?? id) ?? 0;
  for (const [kind, ids] of asked) {
    if (ids.length === 0) continue;
    sections.push({
      title: kindTitle(kind),
      purpose: `What the question asks about ${kindAbout(kind)}: the findings of every sub-analysis that bear on it.`,
      evidenceIds: [...ids].sort(
        (a, b) => rank(b) - rank(a) || at(a) - at(b) || (position.get(a) ?? 0) - (position.get(b) ?? 0),
      ),
    });
  }
  if (dataIds.length > 0)
    sections.push({
      title: 'The data',
      purpose: 'What the tables hold: their rows, columns, kinds and missing values.',
      evidenceIds: dataIds,
    });
  // Themes in the order of the sub-analyses, whichever evidence made them first.
  const order = [...new Set(evidence.map((item) => item.subAnalysisId))];
  sections.push(...order.flatMap((id) => themes.get(id) ?? []));
  if (cross.length > 0)
    sections.push({
      title: 'How the tables relate',
      purpose: 'What the tables joined on their shared key show together: which properties go together.',
      evidenceIds: cross,
    });
  if (sections.length === 0)
    sections.push({
      title: 'Findings',
      purpose: 'What the sub-analyses found; none printed a finding.',
      evidenceIds: [],
    });
  return { sections, gaps: [] };
}

/** Step 5: the section's purpose, then each claim verbatim with its citation. Numbers come only from the claims. */
export function offlineSection(input: WriteInput): string {
  const section: OutlineSection = input.section;
  if (input.evidence.length === 0)
    return 'No evidence was found for this section: the sub-analyses printed no finding about it.';
  // A claim the evidence repeats word for word (two sub-analyses printed it) is written once, citing each.
  const byClaim = new Map<string, EvidenceItem[]>();
  for (const item of input.evidence) {
    const words = claimWords(item.claim);
    byClaim.set(words, [...(byClaim.get(words) ?? []), item]);
  }
  const lines = [...byClaim].map(([claim, items]) => {
    const unverified = items.some((item) => item.numbers.some((number) => !number.verified));
    const cited = items.map((item) => `[${item.id}]`).join('');
    return `- ${claim} ${cited}${unverified ? ' (not every number of it was found in the output it cites)' : ''}`;
  });
  const asked = kindOfTitle(section.title);
  const intro =
    asked !== null
      ? `What the sub-analyses printed about ${kindAbout(asked)}, as the question asks:`
      : section.title === 'The data'
        ? 'What the tables hold, as the sub-analyses printed it:'
        : section.title === 'How the tables relate'
          ? 'Joined on their shared key, the tables show:'
          : 'The sub-analysis of this theme printed:';
  return `${intro}\n\n${lines.join('\n')}`;
}
