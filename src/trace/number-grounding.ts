/**
 * Grounding: are the numbers an answer states found in what the code printed?
 *
 * Pure functions, no I/O. The answer is split into text segments by the
 * caller (the markdown renderer hands over each text run, so list markers,
 * inline code and link targets never reach this module); each segment's
 * numbers are looked up in an index built from the execution outputs.
 *
 * Rules (decisions, documented here because they decide what a reader sees):
 * - A stated number with d decimals matches an output number that rounds OR
 *   truncates to it at d decimals: "6.39" matches 6.391960, "6.4" matches
 *   6.391960, "1194" matches 1194.000000.
 * - Thousands separators are ignored on both sides: "1,194" matches 1194.
 * - Signs: a number written with a minus sign ("-52", "fell by -5.2%") only
 *   matches a printed negative number (-52.55, not 52.86). An unsigned one
 *   matches either sign: prose carries the sign in words ("fell by 0.25" for
 *   a printed -0.25). A minus counts on either side only when it stands alone
 *   before the digits (not 1990-2020, x-5, COVID-19); a value that rounds to
 *   zero has no sign.
 * - Percentages: "24.5%" matches a number printed with a % sign (24.5%,
 *   24.46%), a ratio printed raw that x100 gives it (0.245, 0.2451), or a plain
 *   number that is either printed as written (24.5, 24.50) or stands on a line
 *   that says percent (a % sign, "percent", or "pct" as a word). Not a plain
 *   number that merely rounds to it: a skewness 0.152 does not ground "0.2%".
 *   A number written without % may match one printed with it ("12.5" for 12.5%).
 * - Which output a number links to, when several printed a match: first one
 *   printed the way it is written (with % or as a ratio for a percentage,
 *   without % for a plain number); then the one whose line (up to 120
 *   characters either side) holds most of the answer's words around the
 *   mention (six either side, numbers included, the commonest short words
 *   not), then the longest text shared right before and after it (the offline
 *   analyst's answer quotes its outputs' findings verbatim); then an exact
 *   value over a rounding or truncation; then the latest output (the figure
 *   as last computed before the answer). Only a few places per output (16)
 *   and the latest 128 candidates per key are weighed, so a column that
 *   repeats a value costs little.
 * - Trivial numbers are not checked: whole numbers from 0 to 10 (counts a
 *   reader checks at a glance, and they occur in almost every output, so a
 *   "verified" mark would mean nothing); numbers glued to letters (E3, 8B,
 *   2nd, COVID-19); ISO dates and clock times; and in headings, a leading
 *   section number ("2.", "3.1") and years 1900-2100. Years in body text ARE
 *   checked: "sales peaked in 2019" is a claim about the data.
 */

/** One number as written in the answer. */
export interface NumberMention {
  /** The text as written, e.g. `1,194` or `24.5%`. */
  text: string;
  /** Offsets into the segment it was found in. */
  start: number;
  end: number;
  /** Absolute value, separators removed, percent sign not applied. */
  value: number;
  /** Written with a minus sign (a hyphen or U+2212 standing alone before the digits); absent is unsigned. */
  negative?: boolean;
  /** Digits after the decimal point as written. */
  decimals: number;
  percent: boolean;
}

/** A mention and what it was found in. */
export interface GroundedNumber extends NumberMention {
  verified: boolean;
  /** The output (e.g. `E3`) holding the number; null when unverified. */
  outputId: string | null;
  /** The number as the output printed it; null when unverified. */
  matchedText: string | null;
}

/** The text of one execution output: stdout, the echoed value, table cells. */
export interface GroundingSource {
  outputId: string;
  text: string;
}

export interface SegmentContext {
  /** The segment is (part of) a heading: section numbers and years are not checked. */
  inHeading?: boolean;
  /** The segment starts its line or heading (where a section number would stand). */
  atLineStart?: boolean;
  /** The text of the same line or paragraph before and after the segment (the answer's words around a number, for linking). */
  textBefore?: string;
  textAfter?: string;
}

/** A number as one output printed it. */
interface SourceNumber {
  /** Signed: a minus sign printed right before the digits makes it negative. */
  value: number;
  /** The digits as printed, for truncation; null for scientific notation. */
  written: { integer: string; fraction: string } | null;
  /** Printed with a percent sign after it. */
  percent: boolean;
  /** Which source (by position in the list indexed) and where in its text. */
  source: number;
  start: number;
  end: number;
  /** Its line around it, worked out the first time a mention weighs it. */
  around: Surroundings | undefined;
}

interface Surroundings {
  /** Its line (at most CONTEXT_CHARS either side of it), lower case. */
  before: string;
  after: string;
}

/** A printed number found for a mention, and whether it is the stated value itself rather than a rounding or truncation of it. */
interface Candidate {
  number: SourceNumber;
  exact: boolean;
  /** Printed the way the mention is written: with % (or as a ratio) for a percentage, without for a plain number. */
  sameKind?: boolean;
}

/** What one mention is compared to: the answer's text before and after it. */
export interface MentionSurroundings {
  before: string;
  after: string;
}

/** Places one output keeps per key at most (a column of one repeated value needs a few, not thousands). */
const PER_OUTPUT_CANDIDATES = 16;
/** Candidates weighed by context per key a mention looks up, at most: the latest outputs'. */
const MAX_WEIGHED_CANDIDATES = 128;
/** Characters of context read either side of a number. */
const CONTEXT_CHARS = 120;
/** Words of the answer weighed either side of a mention. */
const CONTEXT_WORDS = 6;

/**
 * The numbers the outputs printed. Keys for a given number of decimals
 * (rounded and truncated, signed) are built the first time an answer needs
 * them, so a run that printed a million numbers costs a few keys each, not
 * eighteen. A key keeps every output that printed a match (a few places
 * each), so a mention can pick the one that printed it in the same words.
 */
export class NumberIndex {
  private readonly byDecimals = new Map<number, KeyChains>();

  constructor(
    private readonly numbers: readonly SourceNumber[],
    private readonly sources: readonly GroundingSource[],
    /** True when the outputs held more than MAX_SOURCE_NUMBERS numbers and the rest were not indexed. */
    readonly truncated: boolean,
  ) {}

  /** Outputs indexed. */
  get sourceCount(): number {
    return this.sources.length;
  }

  get numberCount(): number {
    return this.numbers.length;
  }

  /**
   * An output that printed a number which rounds or truncates to `value` at
   * `decimals`, of either sign and without the percent rule: whether a bare
   * value was printed at all. `groundMention` applies the rules.
   */
  find(value: number, decimals: number): { outputId: string; text: string } | undefined {
    const digits = Math.abs(value).toFixed(decimals);
    const found = this.candidates(digits, 1)[0] ?? this.candidates(`-${digits}`, 1)[0];
    return found === undefined ? undefined : this.entry(found.number);
  }

  /**
   * The printed numbers under a signed key (`-52.5`, `12`), latest output
   * first, at most `limit` of those `accept` takes.
   */
  candidates(key: string, limit: number, accept?: (candidate: Candidate) => boolean): Candidate[] {
    const point = key.indexOf('.');
    const chains = this.keysFor(point === -1 ? 0 : key.length - point - 1);
    const value = Number(key);
    const found: Candidate[] = [];
    for (
      let link = chains.heads.get(key) ?? -1;
      link !== -1 && found.length < limit;
      link = chains.next[link] ?? -1
    ) {
      const number = this.numbers[link >> 1];
      if (number === undefined) break;
      const candidate = { number, exact: number.value === value };
      if (accept === undefined || accept(candidate)) found.push(candidate);
    }
    return found;
  }

  /** The output and the text as printed (with its sign and % sign). */
  entry(number: SourceNumber): { outputId: string; text: string } {
    const source = this.sources[number.source];
    return { outputId: source?.outputId ?? '', text: source?.text.slice(number.start, number.end) ?? '' };
  }

  surroundings(number: SourceNumber): Surroundings {
    if (number.around) return number.around;
    const text = this.sources[number.source]?.text ?? '';
    const from = Math.max(0, number.start - CONTEXT_CHARS);
    const lineStart = text.lastIndexOf('\n', number.start - 1) + 1;
    const newline = text.indexOf('\n', number.end);
    const lineEnd = Math.min(newline === -1 ? text.length : newline, number.end + CONTEXT_CHARS);
    number.around = {
      before: text.slice(Math.max(from, lineStart), number.start).toLowerCase(),
      after: text.slice(number.end, lineEnd).toLowerCase(),
    };
    return number.around;
  }

  private keysFor(decimals: number): KeyChains {
    let chains = this.byDecimals.get(decimals);
    if (chains) return chains;
    // Link 2i is number i under its rounded key, 2i+1 under its truncated one.
    chains = { heads: new Map(), next: new Int32Array(this.numbers.length * 2).fill(-1) };
    for (let position = 0; position < this.numbers.length; position++) {
      const number = this.numbers[position];
      if (number === undefined) continue;
      const { value, written } = number;
      const rounded = signedKey(value.toFixed(decimals));
      link(chains, rounded, position * 2, this.numbers);
      if (written !== null) {
        // Truncation as printed, digit for digit (no binary rounding surprises).
        const kept = written.fraction.slice(0, decimals).padEnd(decimals, '0');
        const truncated = signedKey(
          `${value < 0 ? '-' : ''}${written.integer}${decimals > 0 ? `.${kept}` : ''}`,
        );
        if (truncated !== rounded) link(chains, truncated, position * 2 + 1, this.numbers);
      }
    }
    this.byDecimals.set(decimals, chains);
    return chains;
  }
}

/**
 * The printed numbers under each key at one number of decimals, as chains
 * of links (no array per key): `heads` holds a key's latest link, `next`
 * the link printed before it under the same key, or -1.
 */
interface KeyChains {
  heads: Map<string, number>;
  next: Int32Array;
}

/** "-0.00" is 0.00: a value that rounds to zero has no sign to check. */
function signedKey(key: string): string {
  return key.startsWith('-0') && /^-0(?:\.0*)?$/.test(key) ? key.slice(1) : key;
}

/** Puts a link at the head of its key's chain, unless the output already has PER_OUTPUT_CANDIDATES places there. */
function link(chains: KeyChains, key: string, linkId: number, numbers: readonly SourceNumber[]): void {
  const head = chains.heads.get(key);
  if (head !== undefined) {
    // Numbers arrive in source order, so one output's places under a key are the first links of its chain.
    const source = numbers[linkId >> 1]?.source;
    let same = 0;
    for (let at = head; at !== -1 && numbers[at >> 1]?.source === source; at = chains.next[at] ?? -1) {
      if (++same >= PER_OUTPUT_CANDIDATES) return;
    }
    chains.next[linkId] = head;
  }
  chains.heads.set(key, linkId);
}

const stopWords = new Set([
  'the',
  'of',
  'and',
  'in',
  'to',
  'is',
  'for',
  'by',
  'on',
  'at',
  'from',
  'with',
  'was',
  'are',
  'an',
  'or',
  'as',
]);

/** The words and numbers of a context, lower case, without the commonest short words. */
function contextWords(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+(?:[.,]\p{N}+)*/gu) ?? []).filter(
    (word) => word.length >= 2 && !stopWords.has(word),
  );
}

/** `word` stands in `text` as a whole word (not inside a longer one). */
function hasWord(text: string, word: string): boolean {
  for (let at = text.indexOf(word); at !== -1; at = text.indexOf(word, at + 1)) {
    if (!isWordChar(text[at - 1]) && !isWordChar(text[at + word.length])) return true;
  }
  return false;
}

function isWordChar(char: string | undefined): boolean {
  return char !== undefined && /[\p{L}\p{N}]/u.test(char);
}

/** Numbers indexed at most; beyond that (a cell that dumped a huge array) the rest are not checked against. */
export const MAX_SOURCE_NUMBERS = 1_000_000;

/** Decimals indexed: a stated number with more decimals must be printed exactly. */
const MAX_INDEXED_DECIMALS = 8;

// A number body: grouped thousands or plain digits, optional fraction. The
// lookbehind keeps digits that continue a word, number or decimal out.
const mentionPattern = /(?<![\p{L}\p{N}_.,])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?:\s?(%))?/gu;
const sourcePattern = /(?<![\p{L}\p{N}_.])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?:[eE]([-+]?\d{1,3}))?/gu;
const datePattern =
  /\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?\b|\b\d{1,2}:\d{2}(?::\d{2})?\b/g;
const sectionNumberPattern = /^\s*\d+(?:\.\d+)*\.?(?=\s|$)/;

/** Finds the numbers in one segment of answer text, leaving out the trivial ones. */
export function findNumberMentions(segment: string, context: SegmentContext = {}): NumberMention[] {
  const masked = segment.replace(datePattern, (match) => ' '.repeat(match.length));
  const sectionEnd =
    context.inHeading && context.atLineStart !== false
      ? (sectionNumberPattern.exec(masked)?.[0].length ?? 0)
      : 0;
  const mentions: NumberMention[] = [];
  for (const match of masked.matchAll(mentionPattern)) {
    const start = match.index;
    const integerPart = match[1] ?? '';
    const fraction = match[2] ?? '';
    const percent = match[3] !== undefined;
    const numberEnd = start + integerPart.length + fraction.length;
    const next = masked[numberEnd] ?? '';
    if (/[\p{L}_]/u.test(next) && !percent) continue; // 8B, 2nd, 3D: an identifier, not a quantity
    if (isHyphenatedName(masked, start)) continue; // COVID-19, DeepAnalyze-8B
    if (start < sectionEnd) continue;
    const value = Number(integerPart.replaceAll(',', '') + fraction);
    if (!Number.isFinite(value)) continue;
    const decimals = fraction.length === 0 ? 0 : fraction.length - 1;
    if (!percent && decimals === 0 && value <= 10) continue;
    if (
      context.inHeading &&
      !percent &&
      decimals === 0 &&
      !integerPart.includes(',') &&
      value >= 1900 &&
      value <= 2100
    )
      continue;
    const end = start + match[0].length;
    // A minus sign that stands alone before the number belongs to it: only a printed negative matches it.
    const negative = isStandaloneSign(masked, start);
    const signed = negative ? start - 1 : start;
    mentions.push({
      text: segment.slice(signed, end),
      start: signed,
      end,
      value,
      negative,
      decimals,
      percent,
    });
  }
  return mentions;
}

function isStandaloneSign(text: string, start: number): boolean {
  const before = text.charCodeAt(start - 1);
  if (before !== 45 && before !== 0x2212) return false; // - or −
  return !/[\p{L}\p{N}_.)\]]/u.test(text[start - 2] ?? '');
}

function isHyphenatedName(text: string, start: number): boolean {
  const before = text[start - 1];
  if (before !== '-' && before !== '\u2011') return false;
  return /\p{L}/u.test(text[start - 2] ?? '');
}

/** A number as an output printed it, with its place in the text. */
export interface PrintedNumber {
  /** The digits as printed, e.g. `1,194.5` or `2.5e-3` (no sign). */
  text: string;
  start: number;
  end: number;
}

/**
 * The numbers of an output's text, in order, as the index reads them (one
 * entry per printed number; a re-run finds a number again by its place among them).
 */
export function printedNumbers(text: string): PrintedNumber[] {
  return [...text.matchAll(sourcePattern)].map((match) => ({
    text: match[0],
    start: match.index,
    end: match.index + match[0].length,
  }));
}

/** Indexes every number printed in the outputs, with its sign, whether a % sign followed it, and its place. */
export function buildNumberIndex(sources: readonly GroundingSource[]): NumberIndex {
  const numbers: SourceNumber[] = [];
  let truncated = false;
  outer: for (let sourceIndex = 0; sourceIndex < sources.length; sourceIndex++) {
    const source = sources[sourceIndex];
    if (source === undefined) continue;
    for (const match of source.text.matchAll(sourcePattern)) {
      if (numbers.length >= MAX_SOURCE_NUMBERS) {
        truncated = true;
        break outer;
      }
      const integerPart = match[1] ?? '';
      const fraction = match[2] ?? '';
      const exponent = match[3];
      const { text } = source;
      const negative = isStandaloneSign(text, match.index);
      const start = negative ? match.index - 1 : match.index;
      let end = match.index + match[0].length;
      const percentAt = text.charCodeAt(end) === 32 ? end + 1 : end;
      const printedPercent = text.charCodeAt(percentAt) === 37; // %
      if (printedPercent) end = percentAt + 1;
      const whole = integerPart.replaceAll(',', '');
      // "100,200,300" in printed CSV is three numbers, not one: the first carries the sign, the last the % sign.
      const parts = integerPart.includes(',') ? integerPart.split(',') : [];
      const readings = [whole, ...parts];
      for (let reading = 0; reading < readings.length; reading++) {
        const digits = readings[reading] ?? '';
        const last = reading === 0 || reading === readings.length - 1;
        const ownFraction = last ? fraction : '';
        const literal =
          exponent === undefined || reading !== 0
            ? digits + ownFraction
            : `${digits}${ownFraction}e${exponent}`;
        const magnitude = Math.abs(Number(literal));
        if (!Number.isFinite(magnitude)) continue;
        numbers.push({
          value: negative && reading <= 1 ? -magnitude : magnitude,
          written:
            exponent === undefined
              ? { integer: digits.replace(/^0+(?=\d)/, ''), fraction: ownFraction.slice(1) }
              : null,
          percent: printedPercent && last,
          source: sourceIndex,
          start,
          end,
          around: undefined,
        });
      }
    }
  }
  return new NumberIndex(numbers, sources, truncated);
}

/**
 * Looks one mention up (the rules are at the top of this module). `around`
 * is the answer's text before and after it, to pick among outputs that all
 * printed a match; without it the exact match, then the latest output, wins.
 */
export function groundMention(
  mention: NumberMention,
  index: NumberIndex,
  around?: MentionSurroundings,
): GroundedNumber {
  const candidates = mentionCandidates(mention, index);
  const best = candidates.length <= 1 ? candidates[0] : pickCandidate(candidates, index, around);
  const found = best === undefined ? undefined : index.entry(best.number);
  return {
    ...mention,
    verified: found !== undefined,
    outputId: found?.outputId ?? null,
    matchedText: found?.text ?? null,
  };
}

function mentionCandidates(mention: NumberMention, index: NumberIndex): Candidate[] {
  const keysAt = (
    value: number,
    decimals: number,
    accept?: (candidate: Candidate) => boolean,
  ): Candidate[] => {
    const digits = value.toFixed(Math.min(decimals, MAX_INDEXED_DECIMALS));
    const negativeKey = signedKey(`-${digits}`);
    const negative = index.candidates(negativeKey, MAX_WEIGHED_CANDIDATES, accept);
    if (mention.negative === true || negativeKey === digits) return negative;
    return [...index.candidates(digits, MAX_WEIGHED_CANDIDATES, accept), ...negative];
  };
  if (!mention.percent)
    return keysAt(mention.value, mention.decimals).map((candidate) => ({
      ...candidate,
      sameKind: !candidate.number.percent,
    }));
  // A percentage: a number printed with %, one printed as written, or one on a line that says percent;
  // or a ratio printed raw (0.245 for 24.5%), not itself a percentage.
  return [
    ...keysAt(
      mention.value,
      mention.decimals,
      ({ number, exact }) => number.percent || exact || isPercentLine(index.surroundings(number)),
    ).map((candidate) => ({ ...candidate, sameKind: candidate.number.percent })),
    ...keysAt(mention.value / 100, mention.decimals + 2, ({ number }) => !number.percent).map(
      (candidate) => ({
        ...candidate,
        sameKind: true,
      }),
    ),
  ];
}

// A % sign, or percent / pct as a word of its own (not discount_pct, a column's name).
const percentWord = /%|\bpercent|(?<![\p{L}\p{N}_])pct(?![\p{L}\p{N}_])/u;

function isPercentLine({ before, after }: Surroundings): boolean {
  return percentWord.test(before) || percentWord.test(after);
}

/**
 * The candidate printed the way the mention is written (with or without %);
 * then the one whose line shares most of the answer's words around the
 * mention, then the longest text right before and after it; then an exact
 * match over a rounded or truncated one; then the latest output.
 */
function pickCandidate(
  candidates: readonly Candidate[],
  index: NumberIndex,
  around: MentionSurroundings | undefined,
): Candidate | undefined {
  const first = candidates[0];
  const oneOutput = candidates.every(({ number }) => number.source === first?.number.source);
  const mention = around === undefined || oneOutput ? null : mentionContext(around);
  let best: Candidate | undefined;
  let bestScore: readonly number[] = [];
  for (const candidate of candidates) {
    const score = [
      candidate.sameKind === true ? 1 : 0,
      ...(mention === null ? [0, 0] : contextScore(mention, index.surroundings(candidate.number))),
      candidate.exact ? 1 : 0,
      candidate.number.source,
      -candidate.number.start,
    ];
    if (best === undefined || isHigher(score, bestScore)) {
      best = candidate;
      bestScore = score;
    }
  }
  return best;
}

function isHigher(score: readonly number[], than: readonly number[]): boolean {
  for (const [position, value] of score.entries()) {
    const other = than[position] ?? 0;
    if (value !== other) return value > other;
  }
  return false;
}

interface MentionContext {
  before: string;
  after: string;
  words: readonly string[];
}

function mentionContext(around: MentionSurroundings): MentionContext {
  const before = around.before.slice(-CONTEXT_CHARS).toLowerCase();
  const after = around.after.slice(0, CONTEXT_CHARS).toLowerCase();
  const words = new Set([
    ...contextWords(before).slice(-CONTEXT_WORDS),
    ...contextWords(after).slice(0, CONTEXT_WORDS),
  ]);
  return { before, after, words: [...words] };
}

/**
 * How much of the answer's text around a mention the printed number's line
 * shares: the answer's nearby words found on it, then the length of the
 * text shared right before and right after the number (blanks compare as one).
 */
function contextScore(mention: MentionContext, printed: Surroundings): [number, number] {
  let words = 0;
  for (const word of mention.words)
    if (hasWord(printed.before, word) || hasWord(printed.after, word)) words++;
  return [words, sharedRun(mention.before, printed.before, -1) + sharedRun(mention.after, printed.after, 1)];
}

/** Characters shared from the start (direction 1) or the end (-1) of two texts, a run of blanks matching any other. */
function sharedRun(a: string, b: string, direction: 1 | -1): number {
  let i = direction === 1 ? 0 : a.length - 1;
  let j = direction === 1 ? 0 : b.length - 1;
  let shared = 0;
  while (i >= 0 && j >= 0 && i < a.length && j < b.length) {
    const x = a[i] ?? '';
    const y = b[j] ?? '';
    if (isBlank(x) && isBlank(y)) {
      while (i >= 0 && i < a.length && isBlank(a[i] ?? '')) i += direction;
      while (j >= 0 && j < b.length && isBlank(b[j] ?? '')) j += direction;
    } else if (x === y) {
      i += direction;
      j += direction;
    } else break;
    shared++;
  }
  return shared;
}

function isBlank(char: string): boolean {
  return char === ' ' || char === '\t' || char === '\n';
}

/** Finds and grounds the numbers of one segment. */
export function groundSegment(
  segment: string,
  index: NumberIndex,
  context: SegmentContext = {},
): GroundedNumber[] {
  return findNumberMentions(segment, context).map((mention) =>
    groundMention(mention, index, {
      before: (context.textBefore ?? '') + segment.slice(0, mention.start),
      after: segment.slice(mention.end) + (context.textAfter ?? ''),
    }),
  );
}

export interface GroundingSummary {
  checked: number;
  verified: number;
  unverified: number;
}

export function summarizeGrounding(numbers: readonly GroundedNumber[]): GroundingSummary {
  const verified = numbers.filter((number) => number.verified).length;
  return { checked: numbers.length, verified, unverified: numbers.length - verified };
}
