import type Token from 'markdown-it/lib/token.mjs';

/** Where one inline piece of an answer stands, as number grounding reads it. */
export interface AnswerTextPlace {
  /** Nothing but blank text since the block or the last line break. */
  atLineStart: boolean;
  /** Inside a link's text (its numbers are left alone: the link already points somewhere). */
  inLink: boolean;
  /**
   * The paragraph's text just before and after this piece (inline code and emphasis included, at most
   * `contextChars` each): the answer's words around a number, when they sit in another piece (`` `price` ``).
   */
  textBefore: string;
  textAfter: string;
}

const contextChars = 200;

/**
 * The walk over the children of one inline token of an answer that the report
 * (marking grounded numbers) and the re-run (placing them again) both make: a
 * soft or hard break starts a line, any other token or non-blank text ends
 * the line start, and link_open/link_close count the link depth. `visit` sees
 * every child but the breaks, with the place it stands in.
 */
export function walkAnswerInline(
  children: readonly Token[],
  visit: (child: Token, place: AnswerTextPlace) => void,
): void {
  const pieces = children.map((child) =>
    child.type === 'softbreak' || child.type === 'hardbreak' ? '\n' : child.content,
  );
  const paragraph = pieces.join('');
  let atLineStart = true;
  let linkDepth = 0;
  let offset = 0;
  children.forEach((child, position) => {
    const start = offset;
    offset += pieces[position]?.length ?? 0;
    if (child.type === 'softbreak' || child.type === 'hardbreak') {
      atLineStart = true;
      return;
    }
    if (child.type === 'link_open') linkDepth++;
    if (child.type === 'link_close') linkDepth--;
    visit(child, {
      atLineStart,
      inLink: linkDepth > 0,
      textBefore: paragraph.slice(Math.max(0, start - contextChars), start),
      textAfter: paragraph.slice(offset, offset + contextChars),
    });
    if (child.type !== 'text' || child.content.trim() !== '') atLineStart = false;
  });
}
