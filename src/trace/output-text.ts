import stripAnsi from 'strip-ansi';

/**
 * Makes captured terminal output plain text: ANSI escapes removed (colours,
 * cursor moves), carriage-return progress bars collapsed to what a terminal
 * would finally show, and other control characters dropped. Tabs and
 * newlines are kept.
 */
export function cleanOutputText(text: string): string {
  const withoutAnsi = stripAnsi(text).replace(/\r\n/g, '\n');
  const lines = withoutAnsi.split('\n').map((line) => {
    if (!line.includes('\r')) return line;
    const parts = line.split('\r').filter((part) => part !== '');
    return parts.at(-1) ?? '';
  });
  // eslint-disable-next-line no-control-regex -- removing control characters is the point
  return lines.join('\n').replace(/[\u0000-\u0008\u000b-\u001f\u007f\u0080-\u009f]/g, '');
}
