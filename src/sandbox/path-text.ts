/**
 * File names from the sandbox are chosen by cell code: a name may hold a
 * newline, an escape sequence or a NUL. They must not reach the host's disk
 * (or a terminal, or a log line) as they are.
 */

// C0 controls, DEL, C1 controls, and the Unicode line and paragraph separators.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/u;
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/gu;

/** True when `path` holds a control character (refused as a file name on the host). */
export function hasControlCharacters(path: string): boolean {
  return CONTROL_CHARACTER.test(path);
}

/** `path` with each control character written as `\xNN` / `\uNNNN`, for messages. */
export function escapeControlCharacters(path: string): string {
  return path.replace(CONTROL_CHARACTERS, (character) => {
    const code = character.charCodeAt(0);
    return code <= 0xff
      ? `\\x${code.toString(16).padStart(2, '0')}`
      : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}
