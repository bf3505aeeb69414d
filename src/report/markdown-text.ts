import { isSafeLink, nestedHeadingLevels } from './safe-markdown.ts';

/**
 * Helpers for writing untrusted text into a Markdown file that some other
 * program will render (a Git forge, an editor preview, a static site): raw
 * HTML is defused, unsafe links are reduced to their text, images become
 * links so that opening the file loads nothing.
 */

const atxHeading = /^( {0,3})(#{1,6})(?=\s|$)/;

export interface NeutralizeOptions {
  /** Levels added to every ATX heading (## → ####), so model headings nest under the report's own. Default 0. */
  demoteHeadings?: number;
  /** The level of the report's heading the text sits under: ATX headings are renumbered below it (`nestedHeadingLevels`); in place of `demoteHeadings`. */
  nestHeadingsUnder?: number;
}

/**
 * Model-written markdown, kept as markdown but inert. Fenced code blocks are
 * left as they are, but written so that any CommonMark renderer sees the
 * same fence: the opening and closing fence at column 0 (a fence indented
 * under a list item ends with the item, and the lines after it would be
 * live), only real openings taken (spaces, not tabs; no backtick in a
 * backtick fence's info string), and a fence left open closed at the end.
 * Every line not inside such a fence is neutralized.
 */
export function neutralizeMarkdown(text: string, options: NeutralizeOptions = {}): string {
  const demote = options.demoteHeadings ?? 0;
  /** The output's lines: fences and code as they are, the rest (`live`) to be neutralized. */
  const lines: { text: string; live: boolean }[] = [];
  let fence: string | null = null;
  // A lone \r ends a line for CommonMark as \n does: a fence it closes, or a link definition it ends, must be seen here.
  for (const line of text.split(/\r\n?|\n/)) {
    if (fence !== null) {
      // Closed by any line CommonMark would close it with (and by a few more: the rest is then neutralized).
      const close = /^\s{0,3}(`{3,}|~{3,})(.*)$/.exec(line);
      const marker = close?.[1];
      if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length) {
        lines.push({ text: fence, live: false });
        fence = null;
        const rest = close?.[2]?.trim() ?? '';
        if (rest !== '') lines.push({ text: rest, live: true });
      } else {
        lines.push({ text: line, live: false });
      }
      continue;
    }
    const open = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(line);
    const marker = open?.[1];
    const info = open?.[2] ?? '';
    if (marker !== undefined && !(marker[0] === '`' && info.includes('`'))) {
      fence = marker;
      lines.push({ text: `${marker}${info}`, live: false });
      continue;
    }
    lines.push({ text: line, live: true });
  }
  if (fence !== null) lines.push({ text: fence, live: false });
  return neutralizeLines(lines, demote, options.nestHeadingsUnder)
    .map((line) => line.text)
    .join('\n');
}

/**
 * Model-written text for the middle of a line (after `**E1** `, inside
 * `*…*`, a list item's text), inert there: one line (its line breaks become
 * spaces), with no fence, since a fence opens only at the start of a line and
 * its code lines would then be read as Markdown, raw HTML included. Every `<`
 * is defused, in code spans too: beside other text on the line, a backtick
 * at either end could join a run there and pair the spans differently.
 */
export function neutralizeInlineMarkdown(text: string): string {
  // Whitespace runs, not `\s*\n\s*`: that pattern tried every start of a long run of spaces (quadratic).
  const oneLine = text.replace(/\s+/g, (run) => (/[\r\n]/.test(run) ? ' ' : run));
  return withoutTrailingEscape(neutralizeLine(oneLine, false));
}

/**
 * A backslash at the very end would escape the first character of what a
 * caller writes after the text (a backtick of its code span, the `*` that
 * ends its emphasis). Written as a character reference, it cannot.
 */
function withoutTrailingEscape(line: string): string {
  return /(?:^|[^\\])(?:\\\\)*\\$/.test(line) ? `${line.slice(0, -1)}&#92;` : line;
}

/** The live lines neutralized (headings demoted or nested), fences and code as they are. */
function neutralizeLines(
  lines: readonly { text: string; live: boolean }[],
  demote: number,
  nestHeadingsUnder: number | undefined,
): { text: string; live: boolean }[] {
  const out: { text: string; live: boolean }[] = [];
  /** Indexes in `out` of the heading lines outside fences. */
  const headings: number[] = [];
  for (const line of lines) {
    if (!line.live) {
      out.push(line);
      continue;
    }
    const neutral = neutralizeLine(line.text);
    if (atxHeading.test(neutral)) headings.push(out.length);
    out.push({
      text:
        demote > 0
          ? neutral.replace(
              atxHeading,
              (_match, indent: string, hashes: string) =>
                `${indent}${'#'.repeat(Math.min(6, hashes.length + demote))}`,
            )
          : neutral,
      live: true,
    });
  }
  if (nestHeadingsUnder !== undefined) nestAtxHeadings(out, headings, nestHeadingsUnder);
  return out;
}

/** Renumbers, in place, the ATX headings at `indexes` of `lines` (lines outside fences). */
function nestAtxHeadings(lines: { text: string }[], indexes: readonly number[], under: number): void {
  const levels = nestedHeadingLevels(
    indexes.map((index) => atxHeading.exec(lines[index]?.text ?? '')?.[2]?.length ?? 1),
    under,
  );
  indexes.forEach((index, position) => {
    const line = lines[index];
    if (line === undefined) return;
    line.text = line.text.replace(
      atxHeading,
      (_match, indent: string) => `${indent}${'#'.repeat(levels[position] ?? under + 1)}`,
    );
  });
}

// A link destination may hold one level of balanced parentheses: javascript:alert(1). Matched atomically
// (a lookahead and a backreference): backtracking into it before linkRest took quadratic time.
const destination = String.raw`(?:[^()\s]|\([^()\s]*\))*`;
// No `](` in the rest: `[a](https://a.org [b](javascript:…))` is no link to a renderer (the title is not one),
// which then reads the inner one; matched whole as one safe link, the inner one went unchecked.
const linkRest = String.raw`(?:[^()\]]|\](?!\()|\([^()]*\))*`;

/**
 * One line outside fences, on a line of its own, inert: raw HTML defused,
 * unsafe links reduced, images made links. With `keepCodeSpans`, a `<`
 * inside a code span that can begin no HTML stays `<` (a code span shows it
 * as text; `&lt;` would show as `&lt;`) when the line's spans close on it
 * (`closesItsCodeSpans`), checked on the line as written. Otherwise every
 * `<` is defused, and a line whose backticks could pair with another line's
 * has them written `&#96;`, so that it leaves no code span open.
 */
function neutralizeLine(text: string, keepCodeSpans = true): string {
  const line = inertLinkDefinition(text);
  if (keepCodeSpans && line.includes('`')) {
    const kept = rewriteLinksAndImages(defuseHtml(line, true));
    // A GFM table splits its row at every `|`, inside code spans too: a cell could begin mid-span.
    if (closesItsCodeSpans(kept) && !kept.includes('|') && defuseHtml(kept, true) === kept) return kept;
  }
  const defused = rewriteLinksAndImages(line.replace(/</g, '&lt;'));
  return closesItsCodeSpans(defused) ? defused : defused.replace(/`/g, '&#96;');
}

/** A block-quote or list-item marker, with the indentation before it (sticky: matched where the last one ended). */
const containerMarker = /[ \t]*(?:>|(?:[-+*]|\d{1,9}[.)])(?=[ \t]|$))/y;

/**
 * Where a link reference definition can begin: after indentation and the
 * markers of the block quotes and list items it sits in. A loop, not one
 * pattern with a repeated group: V8 keeps backtracking state for each
 * repetition, and a line of a few megabytes of `>` overflowed its stack.
 */
function definitionStartIndex(line: string): number {
  let at = 0;
  for (;;) {
    containerMarker.lastIndex = at;
    if (!containerMarker.test(line)) break;
    at = containerMarker.lastIndex;
  }
  while (line[at] === ' ' || line[at] === '\t') at += 1;
  return at;
}

/**
 * A line that could begin a link reference definition, made harmless. One
 * whose safe destination is on the line is kept. Any other has its `[`
 * escaped (`\[` shows as `[`), and is text: a label may run on to the next
 * lines and the destination may be the next line's (`[x]:` /
 * `javascript:alert(1)`), in a block quote or a list item too, where no
 * line-by-line check sees it, and a renderer that does not check link
 * schemes itself (pandoc, commonmark.js) made a live `javascript:` link of
 * `[click][x]`. Escaped rather than rewritten, a line that only looks like
 * one reads as written: `[1]: Smith et al.` was shown as
 * `[1]: #unsafe-link-removed et al.`. A line that begins with an inline link
 * (`[text](`) is left to the link rewrite.
 */
function inertLinkDefinition(line: string): string {
  const at = definitionStartIndex(line);
  if (line[at] !== '[') return line;
  const rest = line.slice(at);
  const definition = /^\[[^\][\\]+\]:[ \t]*(\S+)/.exec(rest);
  if (definition !== null && isSafeLink(definition[1] ?? '')) return line;
  // The label's end read as CommonMark does: `[a\](x]:` is a definition whose label is `a\](x`, not a link.
  if (/^\[(?:[^\][\\]|\\.)*\]\(/.test(rest)) return line;
  return `${line.slice(0, at)}\\${rest}`;
}

function rewriteLinksAndImages(line: string): string {
  return (
    line
      .replace(
        // The alt text read as CommonMark does: in `![a\](https://a.org)]` the `\]` is no end, so that is no
        // image (made `[image: a\](https://a.org)]`, it began a link definition after inertLinkDefinition had run).
        new RegExp(`!\\[((?:[^\\][\\\\]|\\\\.)*)\\]\\(\\s*(?=(${destination}))\\2${linkRest}\\)`, 'g'),
        (_match, alt: string, url: string) =>
          isSafeLink(url) && /^https?:/i.test(url)
            ? // A URL as the label has its brackets escaped: `https://a.org/]:javascript:…` ended the label at
              // `]:`, and a line beginning `[image: https://a.org/]:` is a link definition.
              `[image: ${alt || url.replace(/[[\]\\]/g, '\\$&')}](${url})`
            : `*[image: ${alt || 'omitted'}]*`,
      )
      // Any "![" left makes an image of what follows: the "!" of "!![x](https://…)" before the link just made,
      // or a reference-style "![x][ref]". Written as a character reference, it is text whatever comes before it:
      // a backslash escaping it was itself escaped by one the text put before the "!" ("\![x][ref]").
      .replace(/!\[/g, '&#33;[')
      // A `](` the link pattern cannot read (a destination with nested parentheses, which CommonMark allows) is
      // one whose scheme goes unchecked: written `]&#40;`, it opens no link (a reference is never structure).
      .replace(
        new RegExp(`\\]\\(\\s*(?=(${destination}))\\1${linkRest}\\)|\\]\\(`, 'g'),
        (match, url: string | undefined) =>
          url === undefined ? ']&#40;' : isSafeLink(url) ? match : '](#unsafe-link-removed)',
      )
  );
}

/** A line's backtick runs: where each starts and how long it is. */
function backtickRuns(line: string): { start: number; length: number }[] {
  return Array.from(line.matchAll(/`+/g), (match) => ({ start: match.index, length: match[0].length }));
}

/** The index of the run after `index` as long as it, or -1. Looked for from `index` on: from the start it was quadratic. */
function closerOf(runs: readonly { length: number }[], index: number): number {
  const length = runs[index]?.length;
  for (let at = index + 1; at < runs.length; at += 1) if (runs[at]?.length === length) return at;
  return -1;
}

/**
 * Whether every backtick run of `line` closes on the line itself, with no
 * backslash before a backtick: then every renderer pairs them as
 * `defuseHtml` does, and the line leaves no code span open for the next
 * line or for text written after it (an opener left open would pair with a
 * backtick there; an escape shifts the pairing).
 */
function closesItsCodeSpans(line: string): boolean {
  if (line.includes('\\`')) return false;
  const runs = backtickRuns(line);
  for (let index = 0; index < runs.length; index += 1) {
    const closer = closerOf(runs, index);
    if (closer === -1) return false;
    index = closer;
  }
  return true;
}

/**
 * A `<` that could begin raw HTML (a tag, a comment, a declaration, an HTML
 * block) or an autolink (`<scheme:…>`, `<name@host>`), in any renderer.
 */
const htmlOpening = /<(?=[A-Za-z/!?]|[^\s<>]*@)/g;

/**
 * `line` with every `<` that could open HTML written `&lt;`; with `keepCodeSpans`, a `<` inside a code span
 * that can begin nothing (`a < b`, `x <= 3`) stays. One that could is defused there too: a renderer may not
 * pair the backticks as this does (one in a link's destination or title, a reference label, a URL that
 * linkify ends is no delimiter), and the "code" is then text, raw HTML included.
 */
function defuseHtml(line: string, keepCodeSpans: boolean): string {
  if (!keepCodeSpans || !line.includes('`')) return line.replace(/</g, '&lt;');
  const runs = backtickRuns(line);
  let out = '';
  let from = 0;
  for (let index = 0; index < runs.length; index += 1) {
    const opener = runs[index] as { start: number; length: number };
    const closerIndex = closerOf(runs, index);
    const closer = runs[closerIndex];
    // An opener left open is text: the rest of the line is defused (and closesItsCodeSpans refuses the line).
    if (closer === undefined) break;
    const end = closer.start + closer.length;
    out +=
      line.slice(from, opener.start).replace(/</g, '&lt;') +
      line.slice(opener.start, end).replace(htmlOpening, '&lt;');
    from = end;
    index = closerIndex;
  }
  return out + line.slice(from).replace(/</g, '&lt;');
}

/** Plain text (data values, output ids, paths) in running Markdown text or a table cell. */
export function escapeMarkdownText(text: string): string {
  return text
    .replace(/\r\n?|\n/g, ' ')
    .replace(/[\\`*_{}[\]()#+!|<>~]/g, (character) =>
      character === '<' ? '&lt;' : character === '>' ? '&gt;' : `\\${character}`,
    );
}

/**
 * Plain text whose `backticked` names (a column, a command) stay code spans: the rest is escaped as
 * `escapeMarkdownText` does, so no raw HTML can begin outside them and take a backtick away; inside
 * a code span (no backtick in it) markdown and HTML are not read.
 */
export function inlineCodeMarkdown(text: string): string {
  // A lone \r is a line ending to CommonMark, found before code spans are: a span holding one would end the
  // paragraph (or the blockquote) and what follows it would be read as blocks, raw HTML included.
  return text
    .split(/(`[^`\r\n]+`)/)
    .map((part, index) => (index % 2 === 1 ? part : escapeMarkdownText(part)))
    .join('');
}

/** A fenced code block whose fence no backtick run in the content can close. */
export function fencedBlock(content: string, language: string): string {
  // Not Math.max(...runs): spread as arguments, a long content's runs overflowed the stack.
  let longestRun = 2;
  for (const match of content.matchAll(/`+/g)) longestRun = Math.max(longestRun, match[0].length);
  const fence = '`'.repeat(longestRun + 1);
  return `${fence}${language}\n${content.replace(/\n+$/, '')}\n${fence}`;
}
