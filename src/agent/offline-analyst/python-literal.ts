/**
 * Values from the profile and the instruction (file names, column names) go
 * into generated Python as literals, never as code. A JSON string is also a
 * valid Python string literal: the same escapes (\" \\ \n \uXXXX), and Python
 * source is UTF-8, so other characters can stay as they are.
 */
export function pythonString(text: string): string {
  return JSON.stringify(text);
}

export function pythonStringList(items: readonly string[]): string {
  return `[${items.map(pythonString).join(', ')}]`;
}

/** `None` for null, else the string literal. */
export function pythonOptionalString(text: string | null): string {
  return text === null ? 'None' : pythonString(text);
}
