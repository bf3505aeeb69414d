import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * pandas' `describe()` prints as `top` one of a column's most frequent
 * values. When several share the highest count, which one it prints follows
 * numpy's quicksort, which is not stable and whose order of equal keys
 * depends on the CPU's vector instructions: for enrolled.csv's `name` (960
 * names, many of them twice) DeepAnalyze's recorded run printed student890;
 * the runner image prints student936 on a CPU with AVX2 and no AVX-512, and
 * student10 with AVX2 switched off (NPY_DISABLE_CPU_FEATURES). Outputs of
 * the same code on another machine are the same output when they differ
 * only there.
 *
 * Null when `actual` is `expected`, or differs from it only in `top` rows
 * where each differing value is, like the one it replaces, a most frequent
 * value of one column of a CSV file in `workspaceDir`, a count another value
 * shares. Otherwise the first difference, said.
 */
export function differenceBeyondTiedModes(
  actual: string,
  expected: string,
  workspaceDir: string,
): string | null {
  if (actual === expected) return null;
  const actualLines = actual.split('\n');
  const expectedLines = expected.split('\n');
  if (actualLines.length !== expectedLines.length)
    return `${actualLines.length} lines where ${expectedLines.length} were expected`;
  let tied: ReadonlySet<string>[] | null = null;
  for (const [index, line] of actualLines.entries()) {
    const want = expectedLines[index] ?? '';
    if (line === want) continue;
    const words = line.trim().split(/\s+/);
    const wanted = want.trim().split(/\s+/);
    if (words[0] !== 'top' || wanted[0] !== 'top' || words.length !== wanted.length)
      return `line ${index + 1} is ${JSON.stringify(line)} where ${JSON.stringify(want)} was expected`;
    tied ??= tiedModesOfCsvColumns(workspaceDir);
    for (const [at, word] of words.entries()) {
      const other = wanted[at] ?? '';
      if (word === other) continue;
      if (!tied.some((modes) => modes.has(word) && modes.has(other)))
        return `line ${index + 1}: ${word} and ${other} are not most frequent values of one column`;
    }
  }
  return null;
}

/** For each column of each CSV file in the folder (plain commas, no quotes), its most frequent values when more than one shares the top count. */
function tiedModesOfCsvColumns(dir: string): ReadonlySet<string>[] {
  const found: ReadonlySet<string>[] = [];
  for (const name of readdirSync(dir).filter((file) => file.endsWith('.csv'))) {
    const [header, ...rows] = readFileSync(path.join(dir, name), 'utf8').trim().split(/\r?\n/);
    const columns = (header ?? '').split(',');
    columns.forEach((_, column) => {
      const counts = new Map<string, number>();
      for (const row of rows) {
        const value = row.split(',')[column] ?? '';
        counts.set(value, (counts.get(value) ?? 0) + 1);
      }
      const top = Math.max(...counts.values());
      const modes = [...counts].filter(([, count]) => count === top).map(([value]) => value);
      if (modes.length > 1) found.push(new Set(modes));
    });
  }
  return found;
}
