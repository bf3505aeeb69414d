/**
 * Names for an option that does not exist: `maxRound` for `maxRounds`,
 * `baseURL` for `baseUrl`, `idleTimeout` for `idleTimeoutMs`. Used where the
 * public options are checked with strict schemas, so that a misspelt option
 * is an error that says what was meant instead of a run with defaults.
 */

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** The known name the unknown one most likely meant, or null when none is close. */
export function closestOptionName(unknown: string, known: readonly string[]): string | null {
  const lower = unknown.toLowerCase();
  const sameLetters = known.find((name) => name.toLowerCase() === lower);
  if (sameLetters !== undefined) return sameLetters;
  // A unit left off: idleTimeout → idleTimeoutMs, memory → memoryMb.
  const withSuffix = known.find((name) => lower.length >= 4 && name.toLowerCase().startsWith(lower));
  if (withSuffix !== undefined) return withSuffix;
  const allowed = lower.length >= 6 ? 2 : 1;
  let best: { name: string; distance: number } | null = null;
  for (const name of known) {
    const distance = editDistance(lower, name.toLowerCase());
    if (distance <= allowed && (best === null || distance < best.distance)) best = { name, distance };
  }
  return best?.name ?? null;
}

/**
 * "has no option x (did you mean y?)" and its fix, for a list of unknown
 * options of one object whose known options are `known`.
 */
export function unknownOptionsText(
  unknown: readonly string[],
  known: readonly string[],
): { problem: string; fix: string } {
  const first = unknown[0] ?? '';
  const guess = closestOptionName(first, known);
  const names = unknown.join(', ');
  const problem =
    unknown.length === 1
      ? `has no option ${first}${guess === null ? '' : ` (did you mean ${guess}?)`}`
      : `has no options ${names}${guess === null ? '' : ` (did you mean ${guess} for ${first}?)`}`;
  const fix =
    guess === null
      ? `Leave out ${names}; the options are ${known.join(', ')}.`
      : `Write ${guess} instead of ${first}${unknown.length > 1 ? `, and leave out or correct ${unknown.slice(1).join(', ')}` : ''}; the options are ${known.join(', ')}.`;
  return { problem, fix };
}
