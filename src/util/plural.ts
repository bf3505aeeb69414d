/** "1 round", "2 rounds": a count and its noun in the number the count takes ("2 sub-analyses" with `many`). */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}
