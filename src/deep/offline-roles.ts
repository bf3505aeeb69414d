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
  SuperviseInput,
  WriteInput,
} from './deep-roles.ts';
import type { Brief, EvidenceItem, OutlineSection, SubQuestion } from './deep-schema.ts';

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
  // Set by scope: the user's words, the only ones that may name columns (the sub-questions are templates).
  let instruction: string | null = null;
  return {
    modelId: OFFLINE_ANALYST_ID,
    offline: true,
    scope: (input: ScopeInput) => {
      instruction = input.question;
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
      const chosen = chooseFindings(input.executions, maxEvidence, input.subQuestion.tables);
      notes.set(input.subQuestion.id, {
        subQuestion: input.subQuestion,
        stageOfClaim: new Map(chosen.map((finding) => [finding.claim, finding.stage])),
      });
      return Promise.resolve(
        chosen.map(({ claim, outputs, figures }): EvidenceDraft => ({ claim, outputs, figures })),
      );
    },
    plan: (input: PlanInput) => Promise.resolve(offlineOutline(input.evidence, notes)),
    write: (input: WriteInput) => Promise.resolve(offlineSection(input)),
  };
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
  for (const table of valued) {
    questions.push({
      question: `${valuePrefix}${table.ref} show: how are its values distributed, how do its categories split, and what goes with what?`,
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
      'For each question: what its tables hold (rows, columns, missing values), how their values are ' +
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
}

/** The figures and charts an output drew, as the evidence cites them (`E7#figure0`). */
function visualsOf(execution: ExecutionRecord): string[] {
  const visuals: string[] = [];
  execution.result.figures.forEach((figure, index) => {
    if (!('omitted' in figure)) visuals.push(`${execution.outputId}#figure${index}`);
  });
  execution.result.charts.forEach((chart, index) => {
    if (!('omitted' in chart)) visuals.push(`${execution.outputId}#chart${index}`);
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
 * sub-analysis keeps at most `maxEvidence`: a few about the data's shape (its
 * own tables' before the workspace's other files, which another section
 * states), then the rest by how much they say (a breakdown the question asked
 * for, then relationships, time, categories, distributions, outliers), in the
 * order printed.
 */
export function chooseFindings(
  executions: readonly ExecutionRecord[],
  maxEvidence: number,
  tables: readonly string[] = [],
): ChosenFinding[] {
  const all: ChosenFinding[] = [];
  const overviewPrinted = executions.some(
    (execution) =>
      stageOfCode(execution.code) === 'overview' && readFindings(execution.result.stdout.text).length > 0,
  );
  for (const execution of executions) {
    const stage = stageOfCode(execution.code);
    // A failed cell's findings may be half printed; a cell the analyst did not write has none.
    if (stage === null || execution.result.status !== 'ok') continue;
    // The overview repeats each table's shape with its kinds: the load step's list is then redundant.
    if (stage === 'load' && overviewPrinted) continue;
    const figures = visualsOf(execution);
    for (const finding of new Set(readFindings(execution.result.stdout.text))) {
      if (all.some((chosen) => chosen.claim === finding)) continue;
      all.push({ claim: finding, stage, outputs: [execution.outputId], figures, order: all.length });
    }
  }
  const data = all
    .filter((finding) => dataStages.has(finding.stage))
    .sort(
      (a, b) =>
        Number(namesTable(b.claim, tables)) - Number(namesTable(a.claim, tables)) || a.order - b.order,
    )
    .slice(0, MAX_DATA_EVIDENCE);
  const rest = all
    .filter((finding) => !dataStages.has(finding.stage))
    .sort((a, b) => stagePriority[a.stage] - stagePriority[b.stage] || a.order - b.order)
    .slice(0, Math.max(0, maxEvidence - data.length));
  return [...data, ...rest].sort((a, b) => a.order - b.order).slice(0, maxEvidence);
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
 * Step 4: "The data", a section per theme in the order of the sub-analyses, how the tables relate last.
 * Every sub-analysis with evidence gets a place: one whose findings are all about its data's shape (a
 * small table, unreadable files) has them in a section of its own rather than none. A claim that repeats
 * an earlier one word for word goes to the earlier one's section, where it is written once.
 */
export function offlineOutline(
  evidence: readonly EvidenceItem[],
  notes: ReadonlyMap<string, SubAnalysisNote>,
): OutlineDraft {
  const data: EvidenceItem[] = [];
  const cross: string[] = [];
  const themes = new Map<string, { title: string; purpose: string; evidenceIds: string[] }>();
  // Where each claim went, and the ids that said it: a repeat goes right after them, in the same section.
  const sectionOfClaim = new Map<string, { section: string[]; ids: string[] }>();
  const placeRepeat = (item: EvidenceItem): boolean => {
    const earlier = sectionOfClaim.get(claimWords(item.claim));
    if (earlier === undefined) return false;
    const last = earlier.ids.at(-1) ?? '';
    earlier.section.splice(earlier.section.indexOf(last) + 1, 0, item.id);
    earlier.ids.push(item.id);
    return true;
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
  for (const item of evidence) {
    if (placeRepeat(item)) continue;
    const note = notes.get(item.subAnalysisId);
    const stage = note?.stageOfClaim.get(item.claim);
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
    const kind = note === undefined ? 'other' : themeKind(note.subQuestion.question);
    const section = kind === 'cross' || stage === 'relations' ? cross : themeOf(item.subAnalysisId);
    section.push(item.id);
    sectionOfClaim.set(claimWords(item.claim), { section, ids: [item.id] });
  }
  // One that printed nothing but the inventory keeps it, as one that found only its data's shape does.
  data.push(...otherFiles.filter((item) => !withOwnEvidence.has(item.subAnalysisId)));
  // A sub-analysis (other than the join, whose place is "How the tables relate") that found only the shape
  // of its data keeps it in its own section: researched, it is not left out of the outline.
  const dataOnly = new Set(
    data
      .map((item) => item.subAnalysisId)
      .filter((id) => !themes.has(id) && themeKind(notes.get(id)?.subQuestion.question ?? '') !== 'cross'),
  );
  const dataIds: string[] = [];
  for (const item of data) {
    if (placeRepeat(item)) continue;
    const section = dataOnly.has(item.subAnalysisId) ? themeOf(item.subAnalysisId) : dataIds;
    section.push(item.id);
    sectionOfClaim.set(claimWords(item.claim), { section, ids: [item.id] });
  }
  const unreadableSection = [...themes].find(
    ([id]) => themeKind(notes.get(id)?.subQuestion.question ?? '') === 'unreadable',
  )?.[1].evidenceIds;
  for (const item of otherFiles.filter((entry) => withOwnEvidence.has(entry.subAnalysisId))) {
    if (placeRepeat(item)) continue;
    const section = unreadableSection ?? dataIds;
    section.push(item.id);
    sectionOfClaim.set(claimWords(item.claim), { section, ids: [item.id] });
  }
  const sections: OutlineDraft['sections'] = [];
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
  const intro =
    section.title === 'The data'
      ? 'What the tables hold, as the sub-analyses printed it:'
      : section.title === 'How the tables relate'
        ? 'Joined on their shared key, the tables show:'
        : 'The sub-analysis of this theme printed:';
  return `${intro}\n\n${lines.join('\n')}`;
}
