import type Token from 'markdown-it/lib/token.mjs';

/** Where one inline piece of an answer stands, as number grounding reads it. */
export interface AnswerTextPlace {
  /** Nothing but blank text since the block or the last line break. */
  atLineStart: boolean;
  /** Inside a link's text (its numbers are left alone: the link already points somewhere). */
  inLink: boolean;
}

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
  let atLineStart = true;
  let linkDepth = 0;
  for (const child of children) {
    if (child.type === 'softbreak' || child.type === 'hardbreak') {
      atLineStart = true;
      continue;
    }
    if (child.type === 'link_open') linkDepth++;
    if (child.type === 'link_close') linkDepth--;
    visit(child, { atLineStart, inLink: linkDepth > 0 });
    if (child.type !== 'text' || child.content.trim() !== '') atLineStart = false;
  }
}
