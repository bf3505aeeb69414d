/**
 * A duration as a person gave it: in the largest unit that holds it whole ("8 s" for 8 000 ms,
 * "30 min", "2 h", "90 s"), else in seconds with their fraction ("1.5 s"), below a second in ms.
 * Unlike the report's `formatDuration` (a measured time, rounded), a limit is said exactly.
 */
export function durationText(durationMs: number): string {
  const units: ReadonlyArray<readonly [number, string]> = [
    [3_600_000, 'h'],
    [60_000, 'min'],
    [1000, 's'],
  ];
  for (const [size, unit] of units)
    if (durationMs >= size && durationMs % size === 0) return `${durationMs / size} ${unit}`;
  return durationMs < 1000 ? `${durationMs} ms` : `${durationMs / 1000} s`;
}
