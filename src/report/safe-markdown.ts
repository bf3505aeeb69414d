import MarkdownIt from 'markdown-it';
import type Token from 'markdown-it/lib/token.mjs';
import { escapeHtml } from './html-escape.ts';
import { walkAnswerInline } from '../trace/answer-text-walk.ts';
import { groundSegment } from '../trace/number-grounding.ts';
import type { GroundedNumber, NumberIndex } from '../trace/number-grounding.ts';

/**
 * Markdown for untrusted text (model output). Raw HTML is escaped, not
 * passed through (markdown-it `html: false`); links are kept only for
 * http/https/mailto and in-report `#` targets; images are never loaded: they
 * become a link (safe scheme) or their alt text.
 */

const safeLinkPattern = /^(?:https?:|mailto:|#)/i;

export function isSafeLink(url: string): boolean {
  return safeLinkPattern.test(url.trim());
}

function createSafeMarkdown(): MarkdownIt {
  const markdown = new MarkdownIt({ html: false, linkify: false, typographer: false });
  markdown.validateLink = isSafeLink;
  const rules = markdown.renderer.rules;
  rules.image = (tokens, index) => {
    const token = tokens[index];
    const source = token?.attrGet('src') ?? '';
    const alt = token?.content ?? '';
    const label = `image: ${alt || source}`;
    return isSafeLink(source) && source.trim().startsWith('http')
      ? `<a href="${escapeHtml(source)}" rel="noopener noreferrer nofollow">[${escapeHtml(label)}]</a>`
      : `<span class="image-omitted">[${escapeHtml(label)}]</span>`;
  };
  rules.link_open = (tokens, index, options, _env, self) => {
    const token = tokens[index];
    const href = token?.attrGet('href') ?? '';
    if (token && !href.startsWith('#')) token.attrSet('rel', 'noopener noreferrer nofollow');
    return self.renderToken(tokens, index, options);
  };
  return markdown;
}

const safeMarkdown = createSafeMarkdown();

export interface HeadingNesting {
  /** The level of the report's heading the text sits under: its headings go below it (see `nestedHeadingLevels`). */
  nestHeadingsUnder?: number;
}

/**
 * Heading levels for text placed under a heading of level `under`: its top
 * level becomes `under + 1`, and none goes more than one level deeper than
 * the heading before it (at most 6), so the report's outline never skips a
 * level whatever levels the model wrote (`## The data` under `### Question 1`
 * is a level 4 heading).
 */
export function nestedHeadingLevels(levels: readonly number[], under: number): number[] {
  if (levels.length === 0) return [];
  const shift = under + 1 - Math.min(...levels);
  let previous = under;
  return levels.map((level) => {
    previous = Math.max(under + 1, Math.min(level + shift, previous + 1, 6));
    return previous;
  });
}

function nestHeadingTokens(tokens: readonly Token[], under: number | undefined): void {
  if (under === undefined) return;
  const opens = tokens.filter((token) => token.type === 'heading_open');
  const levels = nestedHeadingLevels(
    opens.map((token) => Number(token.tag.slice(1))),
    under,
  );
  let open = 0;
  let tag = '';
  for (const token of tokens) {
    if (token.type === 'heading_open') tag = `h${levels[open++] ?? token.tag.slice(1)}`;
    if (token.type === 'heading_open' || token.type === 'heading_close') token.tag = tag;
  }
}

/** Renders untrusted markdown to inert HTML. */
export function renderSafeMarkdown(text: string, options: HeadingNesting = {}): string {
  const tokens = safeMarkdown.parse(text, {});
  nestHeadingTokens(tokens, options.nestHeadingsUnder);
  return safeMarkdown.renderer.render(tokens, safeMarkdown.options, {});
}

/**
 * The words of markdown without its markup, as a renderer reads it (so the
 * underscores of `sales_plan.xlsx` stay, and those of `_emphasis_` go), with
 * whitespace collapsed: for one-line summaries. Text to be escaped, not HTML.
 */
export function markdownPlainText(text: string): string {
  const words: string[] = [];
  for (const token of safeMarkdown.parse(text, {})) {
    if (token.type === 'fence' || token.type === 'code_block') words.push(token.content);
    for (const child of token.children ?? [])
      if (child.type === 'text' || child.type === 'code_inline') words.push(child.content);
      else if (child.type === 'softbreak' || child.type === 'hardbreak') words.push(' ');
    words.push(' ');
  }
  return words.join('').replace(/\s+/g, ' ').trim();
}

export interface GroundedAnswer {
  html: string;
  /** Every checked number, in reading order. */
  numbers: GroundedNumber[];
}

interface GroundedTextMeta {
  grounded: GroundedNumber[];
}

/** How an output id becomes an in-report anchor. */
export type OutputAnchor = (outputId: string) => string;

interface GroundedRenderEnv {
  anchorFor: OutputAnchor;
  rerunMarks: boolean;
}

/** The marks a re-run puts after a number it could not carry over as it was (escaped brackets in its markdown: `[stale]`, `[not grounded]`, `[sign changed]` as text). */
const rerunMarkPattern = /\[(stale|not grounded|sign changed)\]/g;

/** Escapes plain answer text; in a re-run's answer its marks become styled text (a class, still the same words). */
function plainText(text: string, env: GroundedRenderEnv): string {
  if (!env.rerunMarks) return escapeHtml(text);
  let html = '';
  let position = 0;
  for (const match of text.matchAll(rerunMarkPattern)) {
    const kind =
      match[1] === 'stale' ? 'stale' : match[1] === 'sign changed' ? 'sign-changed' : 'not-grounded';
    html += escapeHtml(text.slice(position, match.index));
    html += `<mark class="rerun-mark rerun-${kind}">${escapeHtml(match[0])}</mark>`;
    position = match.index + match[0].length;
  }
  return html + escapeHtml(text.slice(position));
}

// A second instance whose text rule marks the numbers that grounding attached to each token.
const groundedMarkdown = createSafeMarkdown();
groundedMarkdown.renderer.rules.text = (tokens, index, _options, env: GroundedRenderEnv) => {
  const token = tokens[index];
  if (!token) return '';
  const meta = token.meta as GroundedTextMeta | null;
  return meta?.grounded ? markNumbers(token.content, meta.grounded, env) : plainText(token.content, env);
};

/**
 * Renders the answer with each checked number marked: a verified number links
 * to the output it came from, an unverified one is flagged. Grounding runs on
 * markdown-it's text tokens, so list markers, inline code and link targets are
 * never mistaken for stated figures.
 */
export function renderGroundedAnswer(
  text: string,
  index: NumberIndex,
  anchorFor: OutputAnchor,
  options: { rerunMarks?: boolean } & HeadingNesting = {},
): GroundedAnswer {
  const tokens = groundedMarkdown.parse(text, {});
  nestHeadingTokens(tokens, options.nestHeadingsUnder);
  const numbers: GroundedNumber[] = [];
  let inHeading = false;
  for (const token of tokens) {
    if (token.type === 'heading_open') inHeading = true;
    if (token.type === 'heading_close') inHeading = false;
    if (token.type !== 'inline' || !token.children) continue;
    groundInlineChildren(token.children, index, inHeading, numbers, options.rerunMarks ?? false);
  }
  const env: GroundedRenderEnv = { anchorFor, rerunMarks: options.rerunMarks ?? false };
  return { html: groundedMarkdown.renderer.render(tokens, groundedMarkdown.options, env), numbers };
}

/** One markdown text run of an answer and the numbers grounding found in it (offsets into `text`). */
export interface GroundedSegment {
  text: string;
  numbers: GroundedNumber[];
}

/**
 * The answer's grounded numbers as data, for a client that draws the answer
 * itself (the web UI): the same markdown text runs and rules as
 * `renderGroundedAnswer`, in reading order, only the runs holding a number.
 */
export function groundAnswerSegments(text: string, index: NumberIndex): GroundedSegment[] {
  const tokens = groundedMarkdown.parse(text, {});
  const segments: GroundedSegment[] = [];
  let inHeading = false;
  for (const token of tokens) {
    if (token.type === 'heading_open') inHeading = true;
    if (token.type === 'heading_close') inHeading = false;
    if (token.type !== 'inline' || !token.children) continue;
    groundInlineChildren(token.children, index, inHeading, []);
    for (const child of token.children) {
      const meta = child.meta as GroundedTextMeta | null;
      if (child.type === 'text' && meta?.grounded)
        segments.push({ text: child.content, numbers: meta.grounded });
    }
  }
  return segments;
}

/** A re-run's mark right after a number: the number is the earlier run's value (or was never found), not a new output's. */
const markedUnverified = /^\s*\[(?:stale|not grounded)\]/;

function groundInlineChildren(
  children: Token[],
  index: NumberIndex,
  inHeading: boolean,
  numbers: GroundedNumber[],
  rerunMarks = false,
): void {
  walkAnswerInline(children, (child, { atLineStart, inLink, textBefore, textAfter }) => {
    // Numbers inside link text are left alone: the link already points somewhere.
    if (child.type !== 'text' || inLink) return;
    // A stale number that some new output happens to print is still the old value: never linked as verified.
    const context = { inHeading, atLineStart, textBefore, textAfter };
    const grounded = groundSegment(child.content, index, context).map((number) =>
      rerunMarks && markedUnverified.test(child.content.slice(number.end))
        ? { ...number, verified: false, outputId: null, matchedText: null }
        : number,
    );
    if (grounded.length > 0) {
      const meta: GroundedTextMeta = { grounded };
      child.meta = meta;
      numbers.push(...grounded);
    }
  });
}

function markNumbers(text: string, grounded: readonly GroundedNumber[], env: GroundedRenderEnv): string {
  const { anchorFor } = env;
  let html = '';
  let position = 0;
  for (const number of grounded) {
    html += plainText(text.slice(position, number.start), env);
    const shown = escapeHtml(text.slice(number.start, number.end));
    if (number.verified && number.outputId !== null) {
      const title = `Verified: output ${number.outputId} printed ${number.matchedText ?? ''}`;
      html += `<a class="num num-verified" href="#${escapeHtml(anchorFor(number.outputId))}" title="${escapeHtml(title)}">${shown}<sup>${escapeHtml(number.outputId)}</sup></a>`;
    } else {
      html += `<span class="num num-unverified" title="Unverified: no execution output printed this number">${shown}<sup>?</sup></span>`;
    }
    position = number.end;
  }
  return html + plainText(text.slice(position), env);
}
