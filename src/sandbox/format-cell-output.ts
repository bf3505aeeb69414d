import type { CapturedText, CellResult } from './cell-result.ts';

/**
 * The text of a cell's result as a model reads it inside `<Execute>`.
 *
 * It follows DeepAnalyze's own executor, which the DeepAnalyze-8B model was
 * trained on: stdout, then stderr appended as is; a failing cell shows its
 * traceback after `[Error]:`. Datalyst adds what that executor lacked: the
 * output printed before an error is kept, the last expression's value is
 * echoed (like a notebook), truncation is said, and a timeout, memory kill or
 * output flood is named with what it did to the kernel's state. Figures,
 * charts and tables are not mentioned: they are artifacts the caller may
 * describe on its own.
 *
 * Pure: the same result always gives the same text.
 */
export function formatCellOutput(result: CellResult): string {
  let text = result.stdout.text;
  let stderr = result.stderr.text;
  const error = result.status === 'error' ? result.error : null;
  let errorText = '';
  if (error !== null) {
    const traceback = error.traceback || `${error.name}: ${error.value}\n`;
    if (error.traceback !== '' && stderr.endsWith(error.traceback)) {
      stderr = stderr.slice(0, stderr.length - error.traceback.length);
    }
    errorText = `[Error]:\n${traceback}`;
  }
  text += stderr;
  text += truncationNote('stdout', result.stdout) + truncationNote('stderr', result.stderr);
  if (result.value !== null) text = joinLines(text, result.value);
  if (errorText !== '') text = joinLines(text, errorText);
  if (result.status !== 'ok' && result.status !== 'error') {
    text = joinLines(text, `[${statusLabels[result.status]}]: ${result.statusDetail ?? ''}`.trimEnd());
  } else if (result.status === 'error' && result.statusDetail !== null) {
    text = joinLines(text, `[Note]: ${result.statusDetail}`);
  }
  return text;
}

const statusLabels = {
  timeout: 'Timeout',
  memory: 'Out of memory',
  crashed: 'Kernel crashed',
  'output-limit': 'Output limit',
} as const;

function truncationNote(name: string, captured: CapturedText): string {
  if (!captured.truncated) return '';
  const keptBytes = Buffer.byteLength(captured.text, 'utf8');
  return `\n[${name} truncated: the first ${keptBytes} of ${captured.totalBytes} bytes are shown]\n`;
}

function joinLines(before: string, after: string): string {
  if (before === '' || before.endsWith('\n')) return before + after;
  return `${before}\n${after}`;
}
