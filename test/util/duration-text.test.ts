import { describe, expect, it } from 'vitest';
import { durationText } from '../../src/util/duration-text.ts';

// What broke: `--deep --deadline 8s` said "The run reached its deadline of 8000 ms".
describe('durationText', () => {
  it('says a limit in the largest unit that holds it whole', () => {
    expect(durationText(8000)).toBe('8 s');
    expect(durationText(90_000)).toBe('90 s');
    expect(durationText(30 * 60_000)).toBe('30 min');
    expect(durationText(2 * 3_600_000)).toBe('2 h');
    expect(durationText(1500)).toBe('1.5 s');
    expect(durationText(250)).toBe('250 ms');
  });
});
