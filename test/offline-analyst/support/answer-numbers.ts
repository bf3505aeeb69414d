/**
 * The strictest form of the grounding check: every number written in the
 * answer (digits with an optional fraction, signs and separators aside)
 * must occur verbatim in some Execute output. The report's own check is more
 * forgiving (rounding, separators); the offline analyst quotes outputs
 * exactly, so it must pass this one.
 */
export function numbersMissingFrom(answer: string, outputs: readonly string[]): string[] {
  const printed = outputs.join('\n');
  const numbers = answer.match(/\d+(?:\.\d+)?/g) ?? [];
  return [...new Set(numbers)].filter((number) => !containsNumber(printed, number));
}

function containsNumber(text: string, number: string): boolean {
  // As a whole number, not as the tail of a longer one ("12" inside "312").
  const escaped = number.replace('.', '\\.');
  return new RegExp(`(?<![\\d.])${escaped}(?![\\d])`).test(text);
}
