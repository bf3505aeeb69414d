/**
 * Models wrap the code in a <Code> block in a markdown fence (```python …```),
 * sometimes without a language, sometimes with prose around it, sometimes with
 * the closing fence missing. This returns the Python to run.
 *
 * - No fence: the whole text.
 * - Fences: the content of every fenced block whose language is empty or
 *   Python (```python, ```py, ```python3), in order; other blocks (```text,
 *   ```bash) and prose between them are left out. An unclosed last fence runs
 *   to the end.
 * - Blank lines around the code and common indentation are removed (a block
 *   indented as a whole is not an IndentationError); nothing else changes.
 */
export function stripCodeFence(raw: string): string {
  const lines = raw.split('\n');
  if (!lines.some((line) => line.trimStart().startsWith('```'))) return tidy(lines);

  const kept: string[] = [];
  let inFence = false;
  let keepFence = false;
  for (const line of lines) {
    const trimmed = line.trim();
    if (trimmed.startsWith('```')) {
      if (inFence) {
        inFence = false;
        continue;
      }
      inFence = true;
      const language = trimmed.slice(3).trim().toLowerCase();
      keepFence = language === '' || language === 'python' || language === 'py' || language === 'python3';
      if (keepFence && kept.length > 0) kept.push('');
      continue;
    }
    if (inFence && keepFence) kept.push(line);
  }
  return tidy(kept);
}

function tidy(lines: readonly string[]): string {
  let start = 0;
  let end = lines.length;
  while (start < end && (lines[start] ?? '').trim() === '') start += 1;
  while (end > start && (lines[end - 1] ?? '').trim() === '') end -= 1;
  const body = lines.slice(start, end);
  let common = Number.POSITIVE_INFINITY;
  for (const line of body) {
    if (line.trim() === '') continue;
    common = Math.min(common, /^[ \t]*/.exec(line)?.[0].length ?? 0);
  }
  if (common === 0 || common === Number.POSITIVE_INFINITY) return body.join('\n');
  return body.map((line) => (line.trim() === '' ? line.trimStart() : line.slice(common))).join('\n');
}
