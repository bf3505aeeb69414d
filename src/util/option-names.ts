import { z } from 'zod';
import { ConfigError } from '../errors/index.ts';

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

type OptionIssue = z.ZodError['issues'][number];

/**
 * The issue a failed check of `entryPoint`'s options reports. An option that does not exist comes first,
 * thrown as a ConfigError that names the likely spelling among the names the schema knows at that place
 * (a misspelling usually also leaves the right one missing, and the misspelling is the news); otherwise
 * the first issue is returned, for the caller to word.
 */
export function firstOptionIssue(
  schema: z.ZodType,
  error: z.ZodError,
  entryPoint: string,
): OptionIssue | undefined {
  const issue = error.issues.find((candidate) => candidate.code === 'unrecognized_keys') ?? error.issues[0];
  if (issue?.code !== 'unrecognized_keys') return issue;
  const { problem, fix } = unknownOptionsText(issue.keys, optionNamesAt(schema, issue.path));
  const where =
    issue.path.length === 0 ? entryPoint : `The option ${issue.path.map(String).join('.')} of ${entryPoint}`;
  throw new ConfigError(`${where} ${problem}.`, fix, error);
}

/** The option names of the object schema at `keys` (through optional and nullable), for a misspelling's message. */
function optionNamesAt(schema: z.ZodType, keys: readonly PropertyKey[]): string[] {
  let current: z.ZodType = schema;
  for (let index = 0; ;) {
    if (current instanceof z.ZodOptional || current instanceof z.ZodNullable) {
      current = current.unwrap() as z.ZodType;
      continue;
    }
    if (!(current instanceof z.ZodObject)) return [];
    const key = keys[index];
    if (key === undefined) return Object.keys(current.shape);
    const next: unknown = current.shape[String(key)];
    if (!(next instanceof z.ZodType)) return [];
    current = next;
    index++;
  }
}
