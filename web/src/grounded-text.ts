import type { AnswerGrounding } from './api.ts';
import { h } from './dom.ts';

type Segment = AnswerGrounding['segments'][number];

/**
 * Finds the server's grounding of each text run of the answer, in reading
 * order: the server parsed the same Markdown into the same runs; a run it
 * did not send (no number in it, or parsed differently) gets none, and its
 * numbers stay plain text.
 */
export function segmentFinder(grounding: AnswerGrounding | null): (text: string) => Segment | null {
  const segments = grounding?.segments ?? [];
  let next = 0;
  return (text) => {
    for (let index = next; index < segments.length; index++) {
      const segment = segments[index];
      if (segment !== undefined && segment.text === text) {
        next = index + 1;
        return segment;
      }
    }
    return null;
  };
}

/**
 * A run of answer text as Text nodes, with each number the server grounded
 * as a link to the output that printed it (verified) or a mark (unverified).
 */
export function groundedText(text: string, segment: Segment | null): Node[] {
  const nodes: Node[] = [];
  let position = 0;
  for (const number of segment?.numbers ?? []) {
    if (number.start < position || number.end > text.length || number.start >= number.end) continue;
    nodes.push(document.createTextNode(text.slice(position, number.start)));
    const written = text.slice(number.start, number.end);
    const outputId = number.outputId;
    nodes.push(
      number.verified && outputId !== null && /^[A-Za-z0-9_-]+$/.test(outputId)
        ? h(
            'a',
            {
              class: 'num num-verified',
              href: `#out-${outputId}`,
              title: `Verified: output ${outputId} printed ${number.matchedText ?? written}`,
            },
            written,
            h('sup', {}, outputId),
          )
        : h(
            'mark',
            { class: 'num num-unverified', title: 'Unverified: no execution output printed this number' },
            written,
            h('sup', {}, '?'),
          ),
    );
    position = number.end;
  }
  nodes.push(document.createTextNode(text.slice(position)));
  return nodes;
}
