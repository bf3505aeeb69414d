import picocolors from 'picocolors';
import stripAnsi from 'strip-ansi';
import type { DatalystEnvironment } from '../config/index.ts';

/** The colour functions; all of them return the text unchanged when colours are off. */
export type TerminalStyle = ReturnType<typeof picocolors.createColors>;

export function createTerminalStyle(enabled: boolean): TerminalStyle {
  return picocolors.createColors(enabled);
}

/** NO_COLOR wins, then FORCE_COLOR, then: colours on a real terminal only. */
export function colorEnabled(isTTY: boolean, env: DatalystEnvironment): boolean {
  if (env.noColor) return false;
  if (env.forceColor !== undefined) return env.forceColor;
  return isTTY && !env.dumbTerminal;
}

/** Live progress (streamed text, a redrawn line) needs a terminal that can move the cursor. */
export function liveProgressEnabled(isTTY: boolean, env: DatalystEnvironment): boolean {
  return isTTY && !env.dumbTerminal;
}

// C0/C1 controls other than tab and newline, and bidi overrides: a model or a
// data file could otherwise move the cursor, retitle the window, or make text
// read differently from what it is.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const controlCharacters = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** Model text, cell output and file names are untrusted: printed without escapes or control characters. */
export function sanitizeForTerminal(text: string): string {
  return stripAnsi(text).replace(/\r\n?/g, '\n').replace(controlCharacters, '');
}

/**
 * A file name, sheet name or note in a one-line message: as sanitizeForTerminal, and a line break shown as
 * `\n`, so a name cannot print lines that look like Datalyst's own ("✓ Answered").
 */
export function oneLineForTerminal(text: string): string {
  return sanitizeForTerminal(text).replace(/\n/g, '\\n');
}
