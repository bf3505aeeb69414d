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
 * - Signs are ignored: "fell by 0.25" is grounded by an output of -0.25.
 * - "24.5%" matches an output of 24.5 or of 0.245 (a ratio printed raw).
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
}

interface IndexEntry {
  outputId: string;
  text: string;
}

interface SourceNumber {
  value: number;
  /** The digits as printed, for truncation; null for scientific notation. */
  written: { integer: string; fraction: string } | null;
  entry: IndexEntry;
}

/**
 * The numbers the outputs printed. Keys for a given number of decimals
 * (rounded and truncated) are built the first time an answer needs them, so
 * a run that printed a million numbers costs a few keys each, not eighteen.
 */
export class NumberIndex {
  private readonly byDecimals = new Map<number, Map<string, IndexEntry>>();

  constructor(
    private readonly numbers: readonly SourceNumber[],
    /** Outputs indexed. */
    readonly sourceCount: number,
    /** True when the outputs held more than MAX_SOURCE_NUMBERS numbers and the rest were not indexed. */
    readonly truncated: boolean,
  ) {}

  get numberCount(): number {
    return this.numbers.length;
  }

  /** The first output that printed a number which rounds or truncates to `value` at `decimals`. */
  find(value: number, decimals: number): IndexEntry | undefined {
    return this.keysFor(decimals).get(value.toFixed(decimals));
  }

  private keysFor(decimals: number): Map<string, IndexEntry> {
    let keys = this.byDecimals.get(decimals);
    if (keys) return keys;
    keys = new Map();
    for (const { value, written, entry } of this.numbers) {
      const rounded = value.toFixed(decimals);
      if (!keys.has(rounded)) keys.set(rounded, entry);
      if (written !== null) {
        // Truncation as printed, digit for digit (no binary rounding surprises).
        const kept = written.fraction.slice(0, decimals).padEnd(decimals, '0');
        const truncated = `${written.integer}${decimals > 0 ? `.${kept}` : ''}`;
        if (!keys.has(truncated)) keys.set(truncated, entry);
      }
    }
    this.byDecimals.set(decimals, keys);
    return keys;
  }
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
    // A minus sign that stands alone before the number belongs to it when shown (values compare unsigned).
    const signed = isStandaloneSign(masked, start) ? start - 1 : start;
    mentions.push({ text: segment.slice(signed, end), start: signed, end, value, decimals, percent });
  }
  return mentions;
}

function isStandaloneSign(text: string, start: number): boolean {
  const before = text[start - 1];
  if (before !== '-' && before !== '\u2212') return false;
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

/** Indexes every number printed in the outputs; the first output that printed a number wins. */
export function buildNumberIndex(sources: readonly GroundingSource[]): NumberIndex {
  const numbers: SourceNumber[] = [];
  let truncated = false;
  outer: for (const source of sources) {
    for (const match of source.text.matchAll(sourcePattern)) {
      if (numbers.length >= MAX_SOURCE_NUMBERS) {
        truncated = true;
        break outer;
      }
      const integerPart = match[1] ?? '';
      const fraction = match[2] ?? '';
      const exponent = match[3];
      const entry = { outputId: source.outputId, text: match[0] };
      const readings = [integerPart.replaceAll(',', '')];
      // "100,200,300" in printed CSV is three numbers, not one.
      if (integerPart.includes(',')) readings.push(...integerPart.split(','));
      for (const [readingIndex, digits] of readings.entries()) {
        const ownFraction = readingIndex === 0 || readingIndex === readings.length - 1 ? fraction : '';
        const literal = `${digits}${ownFraction}${exponent === undefined || readingIndex !== 0 ? '' : `e${exponent}`}`;
        const value = Math.abs(Number(literal));
        if (!Number.isFinite(value)) continue;
        const written =
          exponent === undefined
            ? { integer: digits.replace(/^0+(?=\d)/, ''), fraction: ownFraction.slice(1) }
            : null;
        numbers.push({ value, written, entry });
      }
    }
  }
  return new NumberIndex(numbers, sources.length, truncated);
}

/** Looks one mention up; a percent is also tried as a ratio (24.5% = 0.245). */
export function groundMention(mention: NumberMention, index: NumberIndex): GroundedNumber {
  const found =
    lookup(mention.value, mention.decimals, index) ??
    (mention.percent ? lookup(mention.value / 100, mention.decimals + 2, index) : undefined);
  return {
    ...mention,
    verified: found !== undefined,
    outputId: found?.outputId ?? null,
    matchedText: found?.text ?? null,
  };
}

function lookup(value: number, decimals: number, index: NumberIndex): IndexEntry | undefined {
  // Stated with more digits than indexed: only a match at the indexed precision will do.
  return index.find(value, Math.min(decimals, MAX_INDEXED_DECIMALS));
}

/** Finds and grounds the numbers of one segment. */
export function groundSegment(
  segment: string,
  index: NumberIndex,
  context: SegmentContext = {},
): GroundedNumber[] {
  return findNumberMentions(segment, context).map((mention) => groundMention(mention, index));
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
