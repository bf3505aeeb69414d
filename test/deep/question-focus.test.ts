import { describe, expect, it } from 'vitest';
import { questionFocus, relevance, unmentionedWords } from '../../src/deep/question-focus.ts';

/** How the offline deep analysis reads a question (no language model): the kinds asked, in order, and its words. */
describe('questionFocus', () => {
  it('reads the kinds of finding a question asks for, in the order it names them', () => {
    expect(
      questionFocus(
        'Describe the trend and the weekly and yearly patterns of daily visits, and find the days that do not fit.',
      ).kinds,
    ).toEqual(['time', 'outliers']);
    expect(
      questionFocus('Compare weekday and weekend visits and tell me whether traffic is growing').kinds,
    ).toEqual(['comparison', 'time']);
    expect(questionFocus('Describe what these files contain and how clean they are.').kinds).toEqual([
      'quality',
    ]);
    expect(
      questionFocus(
        'Which regions, channels and product categories drive revenue, and how does the discount relate to the units sold?',
      ).kinds,
    ).toEqual(['comparison', 'relation']);
    expect(questionFocus('Generate a data science report.').kinds).toEqual([]);
    expect(questionFocus('Which region grew fastest between 2023 and 2024?').years).toEqual([2023, 2024]);
  });

  it('ranks the finding that answers a kind most directly first', () => {
    const focus = questionFocus('Compare weekday and weekend visits and tell me whether traffic is growing');
    const trend = relevance(
      focus,
      '`daily_visits.csv`: `date` runs from 2022-01-01 to 2023-12-31; the weekly mean of daily visits went from 2740.1 in the first quarter of that span to 3892.5 in the last (42.1% change).',
      'time',
    );
    const outlier = relevance(
      focus,
      '2023-03-14 stands out: `visits` was 11182 against a local median of 3295.',
      'time',
    );
    const correlation = relevance(
      focus,
      '`signups` and `temperature_c` are weakly positively correlated (r = 0.495).',
      'correlations',
    );
    expect(trend).toBeGreaterThan(outlier);
    expect(outlier).toBeGreaterThan(correlation);
    // A question that asks for nothing in particular ranks nothing.
    expect(
      relevance(
        questionFocus('Generate a data science report.'),
        '`a` and `b` are correlated (r = 0.9).',
        'correlations',
      ),
    ).toBe(0);
  });

  it('names the words no finding says, not those a column name holds', () => {
    const focus = questionFocus('Did the unit price or the traffic miss the plan?');
    expect(unmentionedWords(focus, ['`unit_price` ranges from 1 to 9.', '`GF` misses 112 of 114.'])).toEqual([
      'traffic',
      'miss',
      'plan',
    ]);
  });
});
