import { describe, expect, it } from 'vitest';
import { readDatalystEnvironment } from '../../src/config/index.ts';
import { colorEnabled, liveProgressEnabled, sanitizeForTerminal } from '../../src/cli/terminal-style.ts';

describe('terminal style', () => {
  it('colours a terminal, not a pipe; NO_COLOR wins over everything, FORCE_COLOR over the terminal test', () => {
    const env = (vars: NodeJS.ProcessEnv) => readDatalystEnvironment(vars);
    expect(colorEnabled(true, env({}))).toBe(true);
    expect(colorEnabled(false, env({}))).toBe(false);
    expect(colorEnabled(true, env({ NO_COLOR: '1' }))).toBe(false);
    expect(colorEnabled(true, env({ NO_COLOR: '1', FORCE_COLOR: '1' }))).toBe(false);
    expect(colorEnabled(false, env({ FORCE_COLOR: '1' }))).toBe(true);
    expect(colorEnabled(true, env({ FORCE_COLOR: '0' }))).toBe(false);
    expect(colorEnabled(true, env({ TERM: 'dumb' }))).toBe(false);
    expect(liveProgressEnabled(true, env({ TERM: 'dumb' }))).toBe(false);
    expect(liveProgressEnabled(true, env({ NO_COLOR: '1' }))).toBe(true);
  });

  it('strips escape sequences, control characters and bidi overrides but keeps tabs and line breaks', () => {
    expect(sanitizeForTerminal('a\tb\r\nc\x1b[31mred\x1b[0m\x07\x9b2J\u202e')).toBe('a\tb\ncred');
  });
});
