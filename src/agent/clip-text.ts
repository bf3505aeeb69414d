/**
 * The text itself, or its first characters and `…` when it is longer than
 * `maxChars`. For text from the kernel or the data (an error message, a column
 * name, a file path) that goes into a short message: such text can be
 * megabytes long.
 */
export function clipText(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  let end = Math.max(0, maxChars - 1);
  // Never split a surrogate pair: half of one is not a character.
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…`;
}

/** An error's message, clipped, for a notice or a note to the model (a kernel's error can be huge). */
export function errorText(error: unknown, maxChars = 1000): string {
  return clipText(error instanceof Error ? error.message : String(error), maxChars);
}
