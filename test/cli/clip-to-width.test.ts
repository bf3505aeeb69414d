import stringWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import { clipToWidth } from '../../src/cli/clip-to-width.ts';

describe('clipping to terminal columns', () => {
  it('keeps text that fits', () => {
    expect(clipToWidth('revenue 30', 10)).toBe('revenue 30');
  });

  it('counts CJK characters as two columns', () => {
    const clipped = clipToWidth('地区 收入 北部 南部 东部', 10);
    expect(clipped).toBe('地区 收入…');
    expect(stringWidth(clipped)).toBeLessThanOrEqual(10);
  });

  it('never cuts an emoji or a flag in half', () => {
    const clipped = clipToWidth('ok 🇫🇷🇫🇷🇫🇷 👩‍👩‍👧 done', 9);
    expect(clipped).toBe('ok 🇫🇷🇫🇷…');
    expect(stringWidth(clipped)).toBeLessThanOrEqual(9);
  });
});
