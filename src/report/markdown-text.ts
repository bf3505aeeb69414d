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
  const out: string[] = [];
  let fence: string | null = null;
  /** Indexes in `out` of the heading lines outside fences. */
  const headings: number[] = [];
  for (const line of text.split('\n')) {
    if (fence !== null) {
      // Closed by any line CommonMark would close it with (and by a few more: the rest is then neutralized).
      const close = /^\s{0,3}(`{3,}|~{3,})(.*)$/.exec(line);
      const marker = close?.[1];
      if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length) {
        out.push(fence);
        fence = null;
        const rest = close?.[2]?.trim() ?? '';
        if (rest !== '') out.push(neutralizeLine(rest));
      } else {
        out.push(line);
      }
      continue;
    }
    const open = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(line);
    const marker = open?.[1];
    const info = open?.[2] ?? '';
    if (marker !== undefined && !(marker[0] === '`' && info.includes('`'))) {
      fence = marker;
      out.push(`${marker}${info}`);
      continue;
    }
    const neutral = neutralizeLine(line);
    if (atxHeading.test(neutral)) headings.push(out.length);
    out.push(
      demote > 0
        ? neutral.replace(
            atxHeading,
            (_match, indent: string, hashes: string) =>
              `${indent}${'#'.repeat(Math.min(6, hashes.length + demote))}`,
          )
        : neutral,
    );
  }
  if (fence !== null) out.push(fence);
  if (options.nestHeadingsUnder !== undefined) nestAtxHeadings(out, headings, options.nestHeadingsUnder);
  return out.join('\n');
}

/** Renumbers, in place, the ATX headings at `indexes` of `lines` (lines outside fences). */
function nestAtxHeadings(lines: string[], indexes: readonly number[], under: number): void {
  const levels = nestedHeadingLevels(
    indexes.map((index) => atxHeading.exec(lines[index] ?? '')?.[2]?.length ?? 1),
    under,
  );
  indexes.forEach((index, position) => {
    lines[index] = (lines[index] ?? '').replace(
      atxHeading,
      (_match, indent: string) => `${indent}${'#'.repeat(levels[position] ?? under + 1)}`,
    );
  });
}

// A link destination may hold one level of balanced parentheses: javascript:alert(1).
const destination = String.raw`(?:[^()\s]|\([^()\s]*\))*`;
const linkRest = String.raw`(?:[^()]|\([^()]*\))*`;

function neutralizeLine(line: string): string {
  const definition = /^(\s{0,3}\[[^\]]+\]:\s*)(\S+)(.*)$/.exec(line);
  if (definition && !isSafeLink(definition[2] ?? '')) return `${definition[1] ?? ''}#unsafe-link-removed`;
  return (
    line
      .replace(/</g, '&lt;')
      .replace(
        new RegExp(`!\\[([^\\]]*)\\]\\(\\s*(${destination})${linkRest}\\)`, 'g'),
        (_match, alt: string, url: string) =>
          isSafeLink(url) && /^https?:/i.test(url)
            ? `[image: ${alt || url}](${url})`
            : `*[image: ${alt || 'omitted'}]*`,
      )
      // Any "![" left makes an image of what follows: the "!" of "!![x](https://…)" before the link just made,
      // or a reference-style "![x][ref]". Escaped, it is text.
      .replace(/!\[/g, '\\![')
      .replace(new RegExp(`\\]\\(\\s*(${destination})${linkRest}\\)`, 'g'), (match, url: string) =>
        isSafeLink(url) ? match : '](#unsafe-link-removed)',
      )
  );
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
  const longestRun = Math.max(2, ...Array.from(content.matchAll(/`+/g), (match) => match[0].length));
  const fence = '`'.repeat(longestRun + 1);
  return `${fence}${language}\n${content.replace(/\n+$/, '')}\n${fence}`;
}
