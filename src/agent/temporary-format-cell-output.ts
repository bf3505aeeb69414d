import type { CellResult } from '../sandbox/cell-result.ts';

/**
 * TEMPORARY: the sandbox engineer's `formatCellOutput` (src/sandbox) replaces
 * this as soon as it is committed; do not grow it. What the model sees of a
 * cell: its output streams, the echoed value, the error, a non-ok status.
 */
export function formatCellOutputTemporary(result: CellResult): string {
  const parts: string[] = [];
  if (result.stdout.text.length > 0) parts.push(result.stdout.text);
  if (result.stderr.text.length > 0) parts.push(result.stderr.text);
  if (result.value !== null) parts.push(result.value);
  if (result.error !== null)
    parts.push(`[Error]:\n${result.error.traceback || `${result.error.name}: ${result.error.value}`}`);
  if (result.status !== 'ok' && result.status !== 'error' && result.statusDetail !== null) {
    parts.push(`[${result.status}] ${result.statusDetail}`);
  }
  return parts.join('\n');
}
