import type { SummarizeInput } from './deep-roles.ts';
import type { DeepSummary, EvidenceItem } from './deep-schema.ts';
import { kindAbout, kindOfTitle, unmentionedWords, type QuestionFocus } from './question-focus.ts';

/**
 * The offline roles' summary, for the report's first screen: the findings
 * that bear most on what the question asked (verbatim, cited), and, said
 * plainly, what the run could not answer — a kind of finding asked for that
 * no sub-analysis printed, years the data's dates do not cover, words of the
 * question no finding mentions — and how the findings were made (rules, no
 * language model). It claims nothing the evidence does not say.
 */

const MAX_KEY_FINDINGS = 6;
const PER_ASKED_SECTION = 2;
const MAX_WORDS_NAMED = 6;

const limits =
  "These findings are what the offline analyst's rules print for each table (its shape, distributions, " +
  'categories, patterns over time, correlations and values that stand out), chosen and ordered by the ' +
  "question's words: no language model read the question or wrote an answer to it. A question that needs " +
  'judgement needs a language model (`--model`).';

function quoted(words: readonly string[]): string {
  const shown = words.slice(0, MAX_WORDS_NAMED).map((word) => `“${word}”`);
  const list = shown.length <= 1 ? (shown[0] ?? '') : `${shown.slice(0, -1).join(', ')} or ${shown.at(-1)}`;
  return words.length > MAX_WORDS_NAMED ? `${list} (and ${words.length - MAX_WORDS_NAMED} more)` : list;
}

interface DateSpan {
  /** Whose dates, as the finding names them ("`orders.csv`: `order_date`"). */
  of: string;
  first: string;
  last: string;
}

/**
 * The spans of the trends the findings measured ("`orders.csv`: `order_date` runs from 2024-01-01 to
 * 2024-12-31; the total … went from"), else of every date column they describe ("spans … to …"): a
 * change can be measured only within a trend's span.
 */
function dateSpans(evidence: readonly EvidenceItem[]): DateSpan[] {
  const read = (pattern: RegExp) =>
    evidence.flatMap((item) =>
      [...item.claim.matchAll(pattern)].map((match) => ({
        // What the finding names before the dates, within its clause.
        of: (item.claim.slice(0, match.index).split(';').at(-1) ?? '').replace(/[:\s]+$/, '').trim(),
        first: match[1] ?? '',
        last: match[2] ?? '',
      })),
    );
  const trends = read(/\bruns from (\d{4}-\d{2}-\d{2}) to (\d{4}-\d{2}-\d{2})/g);
  return trends.length > 0 ? trends : read(/\bspans (\d{4}-\d{2}-\d{2}) to (\d{4}-\d{2}-\d{2})/g);
}

function andList(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

/** What the question's years ask that the data's dates cannot answer. */
function yearsNote(focus: QuestionFocus, evidence: readonly EvidenceItem[]): string | null {
  if (focus.years.length === 0) return null;
  const years = andList(focus.years.map(String));
  const spans = dateSpans(evidence);
  if (spans.length === 0)
    return `The question names ${years}, but no finding says which dates the data covers, so nothing was measured by year.`;
  const covers = (year: number) =>
    spans.some((span) => Number(span.first.slice(0, 4)) <= year && year <= Number(span.last.slice(0, 4)));
  const outside = focus.years.filter((year) => !covers(year));
  if (outside.length === 0) return null;
  const them = andList(outside.map(String));
  const listed = andList(spans.slice(0, 4).map((span) => `${span.of} from ${span.first} to ${span.last}`));
  const earliest = Math.min(...outside);
  const since = earliest < Math.min(...spans.map((span) => Number(span.first.slice(0, 4))));
  return (
    `The data's dates do not cover ${them}: ${listed}. Nothing about ${outside.length === 1 ? 'that year' : 'those years'} can be measured` +
    (since ? `, so neither can growth since ${earliest}.` : '.')
  );
}

export function offlineSummary(input: SummarizeInput, focus: QuestionFocus): DeepSummary {
  const byId = new Map(input.evidence.map((item) => [item.id, item]));
  const asked = input.sections.filter((section) => kindOfTitle(section.title) !== null);
  // The question's own sections first, their most relevant findings (the outline put them first);
  // a question that asks for nothing in particular: the first finding of each theme.
  const picks =
    asked.length > 0
      ? asked.flatMap((section) => section.evidenceIds.slice(0, PER_ASKED_SECTION * 2))
      : input.sections
          .filter((section) => section.title !== 'The data')
          .flatMap((section) => section.evidenceIds.slice(0, 1));
  const lines: string[] = [];
  const claims = new Set<string>();
  const perSection = new Map<string, number>();
  for (const id of picks) {
    const item = byId.get(id);
    const section = asked.find((entry) => entry.evidenceIds.includes(id))?.id ?? '';
    if (item === undefined || claims.has(item.claim)) continue;
    if (asked.length > 0 && (perSection.get(section) ?? 0) >= PER_ASKED_SECTION) continue;
    claims.add(item.claim);
    perSection.set(section, (perSection.get(section) ?? 0) + 1);
    lines.push(`- ${item.claim.replace(/\s*\n\s*/g, ' ')} [${item.id}]`);
    if (lines.length >= MAX_KEY_FINDINGS) break;
  }

  const cannotAnswer: string[] = [];
  const answered = new Set(asked.map((section) => kindOfTitle(section.title)));
  for (const kind of focus.kinds) {
    if (answered.has(kind)) continue;
    cannotAnswer.push(
      kind === 'time'
        ? 'The question asks about change over time, but no sub-analysis printed a finding about it: the offline analyst measures a trend only on a column it reads as dates.'
        : `The question asks about ${kindAbout(kind)}, but no sub-analysis printed a finding of that kind.`,
    );
  }
  // "Which region grew fastest": the time step measures one trend per table, never one per group.
  if (answered.has('time') && focus.kinds.includes('comparison'))
    cannotAnswer.push(
      'The trends below are measured for each table as a whole, not for each group: how the groups compare in their change over time is not among the findings.',
    );
  const years = yearsNote(focus, input.evidence);
  if (years !== null) cannotAnswer.push(years);
  const unmentioned = unmentionedWords(
    focus,
    input.evidence.map((item) => item.claim),
  );
  if (unmentioned.length > 0)
    cannotAnswer.push(
      `No finding mentions ${quoted(unmentioned)}: what the question asks with ${unmentioned.length === 1 ? 'that word' : 'those words'} may not be answered below (the rules match words, they do not understand them).`,
    );
  return { keyFindings: lines.join('\n'), cannotAnswer, limits };
}
