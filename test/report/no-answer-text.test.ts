import { describe, expect, it } from 'vitest';
import { noAnswerText } from '../../src/report/run-view.ts';

/** A turn of a thread that ended without an answer, as the report's conversation section says it. */
describe('noAnswerText', () => {
  it('says the outcome, then its detail as a sentence of its own (no "(cancelled: The run was cancelled.)."))', () => {
    expect(noAnswerText({ reason: 'cancelled', detail: 'The run was cancelled.' })).toBe(
      'No answer: cancelled. The run was cancelled.',
    );
    expect(noAnswerText({ reason: 'max-rounds', detail: 'stopped after 30 rounds' })).toBe(
      'No answer: the round limit was reached. Stopped after 30 rounds.',
    );
    expect(noAnswerText({ reason: 'no-data', detail: '' })).toBe(
      'No answer: no file held data that could be read.',
    );
  });

  it('a turn the trace ends inside', () => {
    expect(noAnswerText(null)).toBe('No answer: the trace ends inside this turn.');
  });
});
