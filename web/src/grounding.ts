import { h } from './dom.ts';

/**
 * Links each number of an answer to the execution output that printed it,
 * as the report's grounding does (src/report/number-grounding.ts holds the
 * full rules; the UI may not import it, so this is the small core of them):
 * a stated number with d decimals matches a printed number that rounds or
 * truncates to it; thousands separators and signs are ignored; "24.5%"
 * also matches 0.245; whole numbers 0–10 are not checked.
 */
const NUMBER = /(?<![\w.])-?\d{1,3}(?:,\d{3})+(?:\.\d+)?%?|(?<![\w.])-?\d+(?:\.\d+)?%?(?![\w])/g;

export interface OutputText {
  outputId: string;
  text: string;
}

interface Printed {
  outputId: string;
  value: number;
  text: string;
}

function printedNumbers(outputs: readonly OutputText[]): Printed[] {
  const found: Printed[] = [];
  for (const output of outputs) {
    for (const match of output.text.matchAll(/-?\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?/gi)) {
      const value = Number(match[0].replace(/,/g, ''));
      if (Number.isFinite(value))
        found.push({ outputId: output.outputId, value: Math.abs(value), text: match[0] });
    }
  }
  return found;
}

function matches(stated: number, decimals: number, printed: number): boolean {
  const scale = 10 ** decimals;
  const rounded = Math.round(printed * scale) / scale;
  const truncated = Math.trunc(printed * scale) / scale;
  const epsilon = 1e-9 * Math.max(1, stated);
  return Math.abs(rounded - stated) < epsilon || Math.abs(truncated - stated) < epsilon;
}

/** Spans of ISO dates and clock times: their digits are not claims to check. */
const DATE_OR_TIME = /\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?\b|\b\d{1,2}:\d{2}(?::\d{2})?\b/g;

/** The numbers the thread's outputs printed, for `groundedText`. */
export type PrintedNumbers = Printed[];
export { printedNumbers };

/** A run of answer text as text nodes and `<a>`/`<mark>` elements for its numbers. */
export function groundedText(text: string, printed: PrintedNumbers): Node[] {
  const skipped = Array.from(text.matchAll(DATE_OR_TIME), (match) => [
    match.index,
    match.index + match[0].length,
  ]);
  const nodes: Node[] = [];
  let last = 0;
  for (const match of text.matchAll(NUMBER)) {
    const written = match[0];
    const start = match.index;
    if (skipped.some(([from = 0, to = 0]) => start >= from && start < to)) continue;
    const percent = written.endsWith('%');
    const digits = written.replace(/[,%-]/g, '');
    const value = Number(digits);
    const decimals = digits.includes('.') ? (digits.split('.')[1]?.length ?? 0) : 0;
    if (!Number.isFinite(value) || (decimals === 0 && value <= 10 && !percent)) continue;
    nodes.push(document.createTextNode(text.slice(last, start)));
    last = start + written.length;
    const source = printed.find(
      (candidate) =>
        matches(value, decimals, candidate.value) ||
        (percent && matches(value, decimals, candidate.value * 100)),
    );
    nodes.push(
      source === undefined
        ? h(
            'mark',
            { class: 'num num-unverified', title: 'Printed by no execution: unverified' },
            written,
            h('sup', {}, '?'),
          )
        : h(
            'a',
            {
              class: 'num num-verified',
              href: `#out-${source.outputId}`,
              title: `Printed by ${source.outputId} as ${source.text}`,
            },
            written,
            h('sup', {}, source.outputId),
          ),
    );
  }
  nodes.push(document.createTextNode(text.slice(last)));
  return nodes;
}
