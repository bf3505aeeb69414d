import stringWidth from 'string-width';

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/**
 * The text, or as many of its first characters as fit in `columns` terminal
 * columns followed by `…`. Counted in columns as a terminal draws them
 * (string-width: CJK and most emoji take two, combining marks none) and cut
 * between graphemes, so a line of Chinese column names or an emoji flag
 * neither wraps the terminal nor ends in half a character.
 */
export function clipToWidth(text: string, columns: number): string {
  if (stringWidth(text) <= columns) return text;
  let width = 0;
  let clipped = '';
  for (const { segment } of graphemes.segment(text)) {
    const segmentWidth = stringWidth(segment);
    if (width + segmentWidth > columns - 1) break;
    clipped += segment;
    width += segmentWidth;
  }
  return `${clipped}…`;
}
