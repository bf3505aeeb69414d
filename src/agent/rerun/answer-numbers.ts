import MarkdownIt from 'markdown-it';
import type Token from 'markdown-it/lib/token.mjs';
import { walkAnswerInline } from '../../trace/answer-text-walk.ts';
import { groundingSources } from '../../trace/grounding-sources.ts';
import {
  buildNumberIndex,
  findNumberMentions,
  groundMention,
  printedNumbers,
  type GroundingSource,
  type NumberMention,
  type PrintedNumber,
} from '../../trace/number-grounding.ts';
import type { ExecutionRecord } from '../../trace/schema.ts';

/**
 * Carries the numbers of an earlier answer over to the outputs of a re-run.
 *
 * Each number the answer states is grounded against the earlier outputs the
 * way the report grounds it (same mentions, same matching rules). A grounded
 * number has an anchor in the output that printed it:
 *
 * - the output id (cells keep their ids in a re-run: `E4` is the same code);
 * - the *label* of its place: the line that printed it up to the end of the
 *   number's clause (clauses are the parts between semicolons), with every
 *   printed number replaced by `#` and runs of spaces collapsed, e.g.
 *   `revenue # # # #`, or `Top region: North; revenue #` (the words of the
 *   clauses before it say what it is about); a line over 4 KB or of more than
 *   64 clauses is one place;
 * - which place with that label it was (usually the only one), and which
 *   number of the clause.
 *
 * The number is carried over only when the new output prints a place with
 * the same label, that is the same words (everything but the numbers): then
 * the sentence the answer quoted still says the same thing of the new number.
 * When the words changed ("highest on Thu" is now "highest on Wed"), the
 * number is stale, even though another line (the raw "Mon #, …, Thu #") still
 * prints a number for Thu: that number is not the highest, and taking it
 * would make the answer's words false with a verified-looking number.
 *
 * Labels, not the position among all the output's numbers, because new data
 * moves numbers: a table sorted by value reorders its rows, a category that
 * appears adds a row, a wider number shifts pandas' column alignment. The
 * label follows the row; a position would silently pick a neighbour's value.
 * When the label is not in the new output (the row is gone, the words of the
 * sentence changed, the cell failed) the number is stale: it keeps its old
 * value, marked, rather than a guessed one.
 */

/** What became of one stated number. */
export type NumberUpdateStatus =
  /** Grounded before, found at its place in the new output, and different now. */
  | 'updated'
  /**
   * Found at its place, but the output's sign flipped where the answer wrote none ("fell by 0.25" of a
   * printed -0.25, now 0.1): the new number with its sign, marked `[sign changed]`, since the words around
   * it may say the opposite now.
   */
  | 'sign-changed'
  /** Grounded before, found at its place, and the same. */
  | 'unchanged'
  /** Grounded before, but its place is not in the new outputs: kept, marked `[stale]`. */
  | 'stale'
  /** Never grounded (no earlier output printed it): kept, marked `[not grounded]`. */
  | 'not-grounded';

export interface NumberUpdate {
  status: NumberUpdateStatus;
  /** The number as the earlier answer wrote it. */
  oldText: string;
  /** What the new answer writes (the old text for stale and ungrounded numbers). */
  newText: string;
  /** The output it was anchored in (`E4`), or null when it was never grounded. */
  outputId: string | null;
  /** The label of the line that printed it (see above), or null. */
  label: string | null;
  /** Why a stale number could not be placed, or how a number's sign changed; null otherwise. */
  reason: string | null;
}

export interface UpdatedAnswer {
  text: string;
  numbers: NumberUpdate[];
}

export const STALE_MARK = '\\[stale\\]';
export const NOT_GROUNDED_MARK = '\\[not grounded\\]';
export const SIGN_CHANGED_MARK = '\\[sign changed\\]';

/** The same markdown reading as the report's (safe-markdown.ts): numbers are found in text tokens only. */
const markdown = new MarkdownIt({ html: false, linkify: false, typographer: false });

/** ISO dates: not numbers to the grounding, but claims about the data all the same ("spans 2024-01-01 to 2024-12-31"). */
const datePattern = /\b\d{4}-\d{2}-\d{2}\b/g;

function datesIn(text: string): { text: string; start: number; end: number }[] {
  return [...text.matchAll(datePattern)].map((match) => ({
    text: match[0],
    start: match.index,
    end: match.index + match[0].length,
  }));
}

type LocatedMention = LocatedNumber | LocatedDate;

// A whole number standing alone: not part of a word, a decimal, a date, a range or a percent.
const smallCountPattern = /(?<![\p{L}\p{N}_.,\u2212-])(10|\d)(?![\p{L}\p{N}_%]|[.,:-]\d|\s?%)/gu;

/**
 * Whole numbers from 0 to 10 ("4 distinct values", "ranges from 2 to 12"):
 * the grounding leaves them unchecked, but they are claims about the data
 * too. Such a number is printed somewhere in almost every output, so only a
 * place with the same words around it is its source (see smallCountSource);
 * without one it is left as written, unmarked, as the report leaves it.
 */
function smallCounts(text: string): NumberMention[] {
  const masked = text.replace(datePattern, (match) => ' '.repeat(match.length));
  return [...masked.matchAll(smallCountPattern)].map((match) => ({
    text: match[0],
    start: match.index,
    end: match.index + match[0].length,
    value: Number(match[0]),
    decimals: 0,
    percent: false,
  }));
}

interface LocatedDate {
  kind: 'date';
  text: string;
  start: number;
  end: number;
}

interface LocatedNumber {
  kind: 'number';
  mention: NumberMention;
  /** A whole number from 0 to 10, which the grounding does not check (see smallCounts). */
  small: boolean;
  /** Offsets into the whole answer. */
  start: number;
  end: number;
}

/**
 * The answer's checked numbers with their offsets in the answer's own text.
 * markdown-it's text tokens carry no offsets, so each is looked for in its
 * block's lines, in order; a token whose text is not there verbatim (it held
 * a backslash escape or an entity) is left alone.
 */
export function locateMentions(answer: string): LocatedMention[] {
  const lineStarts = [0];
  for (let index = 0; index < answer.length; index++) if (answer[index] === '\n') lineStarts.push(index + 1);
  const offsetOfLine = (line: number) => lineStarts[line] ?? answer.length;
  const located: LocatedMention[] = [];
  let inHeading = false;
  // Tokens come in the order of the text: one cursor for the whole answer. Table cells carry no
  // line map of their own; the enclosing block's (the last map seen) bounds them.
  let cursor = 0;
  let blockMap: [number, number] | null = null;
  for (const token of markdown.parse(answer, {})) {
    if (token.map) blockMap = token.map;
    if (token.type === 'heading_open') inHeading = true;
    if (token.type === 'heading_close') inHeading = false;
    if (token.type !== 'inline' || !token.children || blockMap === null) continue;
    const blockEnd = offsetOfLine(blockMap[1]);
    cursor = Math.max(cursor, offsetOfLine(blockMap[0]));
    cursor = locateInChildren(token.children, answer.slice(0, blockEnd), cursor, inHeading, (found) => {
      located.push(found);
    });
  }
  return located;
}

function locateInChildren(
  children: readonly Token[],
  text: string,
  from: number,
  inHeading: boolean,
  emit: (found: LocatedMention) => void,
): number {
  let cursor = from;
  walkAnswerInline(children, (child, { atLineStart, inLink }) => {
    if (child.type === 'code_inline' && child.content !== '') {
      const at = text.indexOf(child.content, cursor);
      if (at !== -1) cursor = at + child.content.length;
    }
    if (child.type !== 'text') return;
    const at = child.content === '' ? -1 : text.indexOf(child.content, cursor);
    if (at !== -1) {
      // Numbers in link text are not grounded by the report either.
      if (!inLink) {
        const found: LocatedMention[] = [
          ...findNumberMentions(child.content, { inHeading, atLineStart }).map((mention): LocatedMention => ({
            kind: 'number',
            mention,
            small: false,
            start: at + mention.start,
            end: at + mention.end,
          })),
          ...(inHeading ? [] : smallCounts(child.content)).map((mention): LocatedMention => ({
            kind: 'number',
            mention,
            small: true,
            start: at + mention.start,
            end: at + mention.end,
          })),
          ...datesIn(child.content).map((date): LocatedMention => ({
            kind: 'date',
            text: date.text,
            start: at + date.start,
            end: at + date.end,
          })),
        ];
        for (const item of found.sort((left, right) => left.start - right.start)) emit(item);
      }
      cursor = at + child.content.length;
    }
  });
  return cursor;
}

function hasStandaloneSign(line: string, start: number): boolean {
  const before = line[start - 1];
  if (before !== '-' && before !== '+' && before !== '\u2212') return false;
  return !/[\p{L}\p{N}_.)\]]/u.test(line[start - 2] ?? '');
}

/**
 * The text of a line from `from` to `to` with its printed numbers (and a sign
 * of their own) replaced by `#`. `numbers` are the line's, in order; only
 * `numbers[first]` up to (not including) `numbers[last]` are looked at, and
 * they must lie within `from`…`to`: the caller walks them with a cursor.
 */
function labelOf(
  line: string,
  from: number,
  to: number,
  numbers: readonly PrintedNumber[],
  first = 0,
  last = numbers.length,
): string {
  let label = '';
  let position = from;
  for (let index = first; index < last; index++) {
    const number = numbers[index];
    if (number === undefined) break;
    // A sign that stands alone before the number is the number's: "-3.3% change" and "+2.1% change" share a label.
    const signed = hasStandaloneSign(line, number.start) ? number.start - 1 : number.start;
    label += `${line.slice(position, Math.max(position, signed))}#`;
    position = number.end;
  }
  return label + line.slice(position, to);
}

const squeezeSpaces = (text: string): string => text.replace(/\s+/g, ' ');
const collapseSpaces = (text: string): string => squeezeSpaces(text).trim();

/** A line as a label: its printed numbers (with a sign of their own) replaced by `#`, spaces collapsed. */
export function lineLabel(line: string): string {
  return collapseSpaces(labelOf(line, 0, line.length, printedNumbers(line)));
}

/**
 * A line longer than this, or with more clauses, is one place, labelled as a
 * whole (as every line was before clauses): a clause's label holds the line
 * up to it, so the labels of a line grow with the square of its clauses, and
 * output that prints a megabyte on one line would block the event loop.
 * Findings sentences are far shorter.
 */
export const MAX_CLAUSED_LINE_LENGTH = 4096;
export const MAX_CLAUSES = 64;

/**
 * One place of an output that prints numbers: a clause of a line, the part
 * between semicolons. "`North` brings the largest total `revenue` (#, #% of
 * it); the mean per row is highest for `West` (#)" is two claims, and new data
 * may make the second false and leave the first true (Online still brings
 * the most, Partner now has the highest mean). A number is tied to the words
 * of its own clause and of every clause before it on the line, their numbers
 * as `#`: those say what it is about ("Top region: North; revenue #" is
 * North's revenue, and "Top region: West; revenue #" is not).
 */
interface Place {
  outputId: string;
  /** The line that printed it. */
  line: string;
  /** The line up to the end of the clause, numbers as `#`: what is looked up in the new output. */
  label: string;
  /** The clause alone, numbers as `#`, without a list marker: what an answer that quotes the output contains. */
  clauseLabel: string;
  /** Which place with this label in its output (0 = the first). */
  occurrence: number;
  /** Places of the same output with the same label. */
  occurrences: number;
  /** The words of the whole line. */
  words: string[];
  /** The printed numbers and ISO dates of the clause, with offsets into `line`. */
  numbers: PrintedNumber[];
  dates: ReturnType<typeof datesIn>;
}

type LinePlace = Omit<Place, 'outputId' | 'occurrence' | 'occurrences'>;

const withoutListMarker = (label: string): string => label.replace(/^[-*+•]\s+/u, '');

/**
 * The places of one line that print a number, in order. One pass: the
 * numbers and dates are walked with a cursor, and each clause's label is the
 * previous one's text (spaces squeezed) with this clause appended.
 */
function placesOfLine(line: string): LinePlace[] {
  const numbers = printedNumbers(line);
  if (numbers.length === 0) return [];
  const dates = datesIn(line);
  const lineWords = words(line);
  let clauseCount = 1;
  for (let at = line.indexOf(';'); at !== -1 && clauseCount <= MAX_CLAUSES; at = line.indexOf(';', at + 1))
    clauseCount++;
  if (line.length > MAX_CLAUSED_LINE_LENGTH || clauseCount > MAX_CLAUSES) {
    const label = collapseSpaces(labelOf(line, 0, line.length, numbers));
    return [{ line, label, clauseLabel: withoutListMarker(label), words: lineWords, numbers, dates }];
  }
  const places: LinePlace[] = [];
  // The line up to the clause, numbers as `#`, runs of spaces squeezed (not trimmed: a semicolon joins the next clause).
  let prefix = '';
  let numberAt = 0;
  let dateAt = 0;
  for (let start = 0; start <= line.length;) {
    const semicolon = line.indexOf(';', start);
    const end = semicolon === -1 ? line.length : semicolon;
    const firstNumber = numberAt;
    while (numberAt < numbers.length && (numbers[numberAt]?.end ?? Infinity) <= end) numberAt++;
    const firstDate = dateAt;
    while (dateAt < dates.length && (dates[dateAt]?.end ?? Infinity) <= end) dateAt++;
    const clause = squeezeSpaces(labelOf(line, start, end, numbers, firstNumber, numberAt));
    prefix += clause;
    if (numberAt > firstNumber) {
      places.push({
        line,
        label: prefix.trim(),
        clauseLabel: withoutListMarker(clause.trim()),
        words: lineWords,
        numbers: numbers.slice(firstNumber, numberAt),
        dates: dates.slice(firstDate, dateAt),
      });
    }
    if (semicolon === -1) break;
    prefix += ';';
    start = semicolon + 1;
  }
  return places;
}

/** The labels of a line's places, in order (see Place): one per clause that prints a number, or one for a line too long for clauses. */
export function placeLabels(line: string): string[] {
  return placesOfLine(line).map((place) => place.label);
}

interface OutputPlaces {
  /** In the order printed. */
  list: Place[];
  byLabel: Map<string, Place[]>;
}

/** Each output's places, found once: a re-run looks labels up once per candidate place. */
const placeIndexes = new WeakMap<GroundingSource, OutputPlaces>();

function placesOf(source: GroundingSource): OutputPlaces {
  let places = placeIndexes.get(source);
  if (places === undefined) {
    const list: Place[] = [];
    const byLabel = new Map<string, Place[]>();
    for (const text of source.text.split('\n')) {
      for (const found of placesOfLine(text)) {
        const same = byLabel.get(found.label) ?? [];
        const place: Place = { ...found, outputId: source.outputId, occurrence: same.length, occurrences: 0 };
        same.push(place);
        byLabel.set(found.label, same);
        list.push(place);
      }
    }
    for (const place of list) place.occurrences = byLabel.get(place.label)?.length ?? 0;
    places = { list, byLabel };
    placeIndexes.set(source, places);
  }
  return places;
}

interface Anchor {
  outputId: string;
  /** The label of its place (see Place). */
  label: string;
  /** Which place with this label (0 = the first). */
  occurrence: number;
  /**
   * How many places of the output had this label. A new output with another
   * count (a table gone, so its "region has # distinct values" line too) no
   * longer says which place is which: the n-th could be another table's.
   */
  occurrences: number;
  /** Which printed number of the place. */
  position: number;
  /** The stated number is a percent that the output printed as a ratio (24.5% for 0.245). */
  ratio: boolean;
  /** A number, or an ISO date (then `position` counts the place's dates). */
  kind: 'number' | 'date';
}

const wordPattern = /[\p{L}_][\p{L}\p{N}_]*/gu;

function words(text: string): string[] {
  return [...text.toLowerCase().matchAll(wordPattern)].map((match) => match[0]);
}

/** How much two word lists share (Jaccard index of their sets). */
function overlap(left: readonly string[], right: readonly string[]): number {
  const a = new Set(left);
  const b = new Set(right);
  if (a.size + b.size === 0) return 0;
  let shared = 0;
  for (const word of a) if (b.has(word)) shared++;
  return shared / (a.size + b.size - shared);
}

/** The words that stand right before a place in a line, nearest first. */
function wordsBefore(line: string, offset: number, count = 3): string[] {
  return words(line.slice(0, offset)).slice(-count).reverse();
}

/** The words that stand right after a place in a line, nearest first. */
function wordsAfter(line: string, offset: number, count = 1): string[] {
  return words(line.slice(offset)).slice(0, count);
}

/** Where a mention stands in the answer: its line's words and label, and the words right before and after it. */
export interface MentionContext {
  lineWords: string[];
  /** The answer's line as a label (numbers as `#`): a place whose clause it contains is quoted by the answer. */
  lineLabel: string;
  nearWords: string[];
  nextWords: string[];
}

function contextOf(answer: string, start: number, end: number): MentionContext {
  const lineStart = answer.lastIndexOf('\n', start - 1) + 1;
  const lineEndIndex = answer.indexOf('\n', start);
  const line = answer.slice(lineStart, lineEndIndex === -1 ? answer.length : lineEndIndex);
  return {
    lineWords: words(line),
    lineLabel: lineLabel(line),
    nearWords: wordsBefore(line, start - lineStart),
    nextWords: wordsAfter(line, end - lineStart),
  };
}

/**
 * Whether a printed place can be a small count's source: the word right
 * before it and the word right after it are the answer's, wherever both have
 * one, and at least one of them is compared. "`orders.csv`): 4 distinct
 * values" comes from a line that says "csv): 4 distinct", never from a 4.8
 * printed after "values" on another line about the same file.
 */
function smallCountSource(
  context: MentionContext,
  before: readonly string[],
  after: readonly string[],
): boolean {
  const pairs: [string | undefined, string | undefined][] = [
    [context.nearWords[0], before[0]],
    [context.nextWords[0], after[0]],
  ];
  const compared = pairs.filter(([answer, printed]) => answer !== undefined && printed !== undefined);
  return compared.length > 0 && compared.every(([answer, printed]) => answer === printed);
}

/** Each printed number's own index, built once: whether one number grounds a mention uses the grounding's own rules. */
class PrintedMatcher {
  private readonly indexes = new Map<string, ReturnType<typeof buildNumberIndex>>();

  match(mention: NumberMention, printed: string): 'direct' | 'ratio' | null {
    let index = this.indexes.get(printed);
    if (index === undefined) {
      index = buildNumberIndex([{ outputId: '', text: printed }]);
      this.indexes.set(printed, index);
    }
    if (index.find(mention.value, Math.min(mention.decimals, 8)) !== undefined) return 'direct';
    if (mention.percent && index.find(mention.value / 100, Math.min(mention.decimals + 2, 8)) !== undefined)
      return 'ratio';
    return null;
  }
}

/**
 * Where the earlier outputs printed a stated number, best first: the place
 * most like the answer's sentence. Every place that grounds it is scored by
 * whether the answer quotes its clause word for word (the offline analyst's
 * answer quotes its findings lines: "highest on Thu (#)" is that sentence of
 * the output, not the raw "Mon #, …, Thu #" row that also prints the number),
 * how much its line reads like the answer's line (shared words), and how many
 * of the three words right before the answer's number stand right before it:
 * the answer's "has 49 missing values" is the output's "has 49 missing
 * values", not the "49 rows" of another table that happened to be printed
 * first. Ties keep the order printed (the grounding's own first choice).
 */
function anchorsOf(
  value: LocatedMention,
  context: MentionContext,
  places: readonly Place[],
  matcher: PrintedMatcher,
): Anchor[] {
  const scored: { anchor: Anchor; score: number }[] = [];
  for (const place of places) {
    let placeScore: number | null = null;
    const printed = value.kind === 'date' ? place.dates : place.numbers;
    for (const [position, number] of printed.entries()) {
      const how =
        value.kind === 'date'
          ? number.text === value.text
            ? 'direct'
            : null
          : matcher.match(value.mention, number.text);
      if (how === null) continue;
      const near = wordsBefore(place.line, number.start);
      if (
        value.kind === 'number' &&
        value.small &&
        !smallCountSource(context, near, wordsAfter(place.line, number.end))
      )
        continue;
      const quoted = /\p{L}/u.test(place.clauseLabel) && context.lineLabel.includes(place.clauseLabel);
      placeScore ??= (quoted ? 1 : 0) + overlap(context.lineWords, place.words);
      const nearScore =
        context.nearWords.length === 0
          ? 0
          : context.nearWords.filter((word) => near.includes(word)).length / context.nearWords.length;
      scored.push({
        score: placeScore + nearScore,
        anchor: {
          outputId: place.outputId,
          label: place.label,
          occurrence: place.occurrence,
          occurrences: place.occurrences,
          position,
          ratio: how === 'ratio',
          kind: value.kind,
        },
      });
    }
  }
  // Array.prototype.sort is stable: equal scores keep the printed order.
  return scored.sort((left, right) => right.score - left.score).map((entry) => entry.anchor);
}

function placeIn(
  anchor: Anchor,
  byId: ReadonlyMap<string, GroundingSource>,
): { text: string; sign: string } | null {
  const source = byId.get(anchor.outputId);
  return source === undefined ? null : numberAt(anchor, source);
}

/**
 * The number at the anchor's place in an output, with its sign; null when the
 * place is gone: no place with the label's words, or another count of them.
 */
function numberAt(anchor: Anchor, source: GroundingSource): { text: string; sign: string } | null {
  const same = placesOf(source).byLabel.get(anchor.label) ?? [];
  if (same.length !== anchor.occurrences) return null;
  const place = same[anchor.occurrence];
  if (place === undefined) return null;
  if (anchor.kind === 'date') {
    const date = place.dates[anchor.position];
    return date === undefined ? null : { text: date.text, sign: '' };
  }
  const number = place.numbers[anchor.position];
  if (number === undefined) return null;
  return {
    text: number.text,
    sign: hasStandaloneSign(place.line, number.start) ? (place.line[number.start - 1] ?? '') : '',
  };
}

/** Why an anchor's place is not found in a new output that ran: its words changed or are gone, or are printed a different number of times. */
function staleLineReason(anchor: Anchor, newById: ReadonlyMap<string, GroundingSource>): string {
  const source = newById.get(anchor.outputId);
  const count = source === undefined ? 0 : (placesOf(source).byLabel.get(anchor.label)?.length ?? 0);
  if (count === 0) return `${anchor.outputId} no longer prints the line "${anchor.label}"`;
  const times = (n: number) => (n === 1 ? 'once' : `${n} times`);
  return `${anchor.outputId} prints the line "${anchor.label}" ${times(count)}, not ${times(anchor.occurrences)}: which one is this number's cannot be told`;
}

const isMinus = (sign: string): boolean => sign === '-' || sign === '\u2212';

/** How many decimals a printed number gives the answer: two fewer for a percent of a printed ratio. */
function decimalsOf(printed: string, ratio: boolean, mention: NumberMention): number {
  const [mantissa = '', exponent] = printed.replaceAll(',', '').split(/[eE]/);
  const decimals = exponent === undefined ? (mantissa.split('.')[1]?.length ?? 0) : mention.decimals;
  return ratio ? Math.max(0, decimals - 2) : decimals;
}

/**
 * The new number written the way the old one was: thousands separators only
 * if the old had them, the percent sign as it stood, and a sign only where
 * the old number showed one (then the output's). Its decimals are the new
 * output's, as printed ("fences [1, 9]" of a printed 1 and 9 becomes "[-0.5,
 * 11.50]", not "[-1, 12]": rounded to the old decimals it would say
 * something the output does not). Only where the answer had rounded what was
 * printed (`oldPrinted`: 5.16 of a printed 5.1625) is the new number rounded
 * the same way, never to a zero that was not printed, and never with more
 * decimals than printed: no precision is made up.
 */
export function formatLike(
  mention: NumberMention,
  printed: string,
  printedSign: string,
  ratio: boolean,
  oldPrinted: string | null,
): string {
  const [mantissa = '', exponent] = printed.replaceAll(',', '').split(/[eE]/);
  const value = Number(mantissa) * 10 ** Number(exponent ?? 0) * (ratio ? 100 : 1);
  const available = decimalsOf(printed, ratio, mention);
  const rounded = oldPrinted === null || mention.decimals < decimalsOf(oldPrinted, ratio, mention);
  let decimals = rounded ? Math.min(mention.decimals, available) : available;
  while (decimals < available && value !== 0 && Number(value.toFixed(decimals)) === 0) decimals++;
  const grouped = /\d,\d{3}/.test(mention.text);
  const digits = new Intl.NumberFormat('en-US', {
    minimumFractionDigits: decimals,
    maximumFractionDigits: decimals,
    useGrouping: grouped,
  }).format(value);
  const sign = /^[-\u2212]/.exec(mention.text)?.[0] ?? '';
  const percent = /\s?%$/.exec(mention.text)?.[0] ?? '';
  // The output's sign where the answer showed one ("-3.3%" becomes "+2.1%" or "2.1%" as printed), and the answer's minus character.
  const shown = sign === '' || printedSign === '' ? '' : printedSign === '+' ? '+' : sign;
  return `${shown}${digits}${percent}`;
}

/**
 * The earlier answer with every grounded number replaced by the number at its
 * place in the new outputs, every grounded number that has no place any more
 * marked `[stale]`, and every number that was never grounded marked `[not
 * grounded]` (both keep their old value). `newExecutions` are the re-run's
 * cells, with the same output ids as the earlier ones.
 */
export function updateAnswerNumbers(
  answer: string,
  oldExecutions: readonly ExecutionRecord[],
  newExecutions: readonly ExecutionRecord[],
): UpdatedAnswer {
  const oldSources = groundingSources(oldExecutions);
  const oldIndex = buildNumberIndex(oldSources);
  const oldPlaces = oldSources.flatMap((source) => placesOf(source).list);
  const matcher = new PrintedMatcher();
  const newById = new Map(
    groundingSources(newExecutions.filter((execution) => execution.result.status === 'ok')).map((source) => [
      source.outputId,
      source,
    ]),
  );
  const oldById = new Map(oldSources.map((source) => [source.outputId, source]));
  const ranById = new Map(newExecutions.map((execution) => [execution.outputId, execution.result.status]));
  const numbers: NumberUpdate[] = [];
  let text = '';
  let position = 0;
  for (const located of locateMentions(answer)) {
    const { start, end } = located;
    const update = updateOne(
      located,
      contextOf(answer, start, end),
      oldIndex,
      oldPlaces,
      matcher,
      { oldById, newById },
      ranById,
    );
    if (update === null) continue; // a date no output printed: not a checked claim, left as written
    numbers.push(update);
    text += answer.slice(position, start);
    if (update.status === 'stale') text += `${update.oldText} ${STALE_MARK}`;
    else if (update.status === 'not-grounded') text += `${update.oldText} ${NOT_GROUNDED_MARK}`;
    else text += update.newText;
    position = end;
  }
  return { text: text + answer.slice(position), numbers };
}

function updateOne(
  located: LocatedMention,
  context: MentionContext,
  oldIndex: ReturnType<typeof buildNumberIndex>,
  oldPlaces: readonly Place[],
  matcher: PrintedMatcher,
  outputs: { oldById: ReadonlyMap<string, GroundingSource>; newById: ReadonlyMap<string, GroundingSource> },
  ranById: ReadonlyMap<string, string>,
): NumberUpdate | null {
  const { newById } = outputs;
  const oldText = located.kind === 'date' ? located.text : located.mention.text;
  const kept = { oldText, newText: oldText };
  const grounded = located.kind === 'date' || groundMention(located.mention, oldIndex).verified;
  const small = located.kind === 'number' && located.small;
  // A small count's places are only those with the same words around it (see anchorsOf).
  const anchor = grounded ? anchorsOf(located, context, oldPlaces, matcher)[0] : undefined;
  if (anchor === undefined) {
    if (located.kind === 'date' || small) return null;
    return { ...kept, status: 'not-grounded', outputId: null, label: null, reason: null };
  }
  // Only the best place, the one most like the answer's sentence: when the new output no longer
  // prints its words, the number is stale. Never the next best that still prints a number there
  // (the raw "Thu #" row when "highest on Thu (#)" now reads "highest on Wed (#)"): that number
  // is real, but the answer's words around it would no longer hold.
  const found = placeIn(anchor, newById);
  if (found === null) {
    const status = ranById.get(anchor.outputId);
    const reason =
      status === undefined
        ? `${anchor.outputId} was not run`
        : status !== 'ok'
          ? `${anchor.outputId} ended ${status}`
          : staleLineReason(anchor, newById);
    return { ...kept, status: 'stale', outputId: anchor.outputId, label: anchor.label, reason };
  }
  const before = located.kind === 'number' ? placeIn(anchor, outputs.oldById) : null;
  if (located.kind === 'number' && !/^[-\u2212]/.test(located.mention.text)) {
    // The answer wrote no sign, so its words may carry the direction ("fell by"): a flip is said, not hidden.
    if (before !== null && isMinus(before.sign) !== isMinus(found.sign)) {
      const magnitude = formatLike(located.mention, found.text, '', anchor.ratio, before.text);
      return {
        oldText,
        newText: `${isMinus(found.sign) ? found.sign : ''}${magnitude} ${SIGN_CHANGED_MARK}`,
        status: 'sign-changed',
        outputId: anchor.outputId,
        label: anchor.label,
        reason: `${anchor.outputId} printed ${before.sign}${before.text}, now ${found.sign}${found.text}`,
      };
    }
  }
  const newText =
    located.kind === 'date'
      ? found.text
      : formatLike(located.mention, found.text, found.sign, anchor.ratio, before?.text ?? null);
  return {
    oldText,
    newText,
    status: newText === oldText ? 'unchanged' : 'updated',
    outputId: anchor.outputId,
    label: anchor.label,
    reason: null,
  };
}
