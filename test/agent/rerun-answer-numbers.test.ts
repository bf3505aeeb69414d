import { describe, expect, it } from 'vitest';
import { MAX_CLAUSED_LINE_LENGTH, MAX_CLAUSES, placeLabels } from '../../src/agent/rerun/answer-numbers.ts';
import { lineLabel, updateAnswerNumbers } from '../../src/agent/rerun/index.ts';
import { printedExecution as execution } from '../support/execution-record.ts';

describe('carrying an answer’s numbers over to a re-run’s outputs', () => {
  it('labels a line by its words, numbers (with their own sign) as #, spaces collapsed', () => {
    expect(lineLabel('revenue       297.7  225.9  26.64  2626.0')).toBe('revenue # # # #');
    expect(lineLabel('went from 119.6 to 115.6 (-3.3% change)')).toBe('went from # to # (#% change)');
    expect(lineLabel('Q1 total 1,194')).toBe('Q1 total #');
  });

  it('finds each number by the label of its line, so a re-sorted table still gives the right row', () => {
    const before = [execution('E1', 'region   revenue\nNorth    1,250.5\nSouth    800.25\nrows: 1200')];
    // New data: South now sells more and the table is sorted by revenue.
    const after = [execution('E1', 'region   revenue\nSouth    2,010.75\nNorth    990.5\nrows: 300')];
    const answer = 'North sold 1,250.5 and South 800.25 over 1200 orders.';
    const updated = updateAnswerNumbers(answer, before, after);
    // Written like the old number: 800.25 had no thousands separator, so 2010.75 gets none.
    expect(updated.text).toBe('North sold 990.5 and South 2010.75 over 300 orders.');
    expect(updated.numbers.map((number) => number.status)).toEqual(['updated', 'updated', 'updated']);
  });

  it('prefers the line that reads like the answer over a coincidence printed earlier', () => {
    const before = [
      execution('E1', 'returns: 49 rows'),
      execution('E2', 'orders has 49 missing values in discount'),
    ];
    const after = [
      execution('E1', 'returns: 49 rows'),
      execution('E2', 'orders has 7 missing values in discount'),
    ];
    const updated = updateAnswerNumbers('Orders has 49 missing values.', before, after);
    expect(updated.text).toBe('Orders has 7 missing values.');
    expect(updated.numbers[0]?.outputId).toBe('E2');
  });

  it('marks a ranking sentence stale when its words changed (Thu → Wed), never taking the number from a raw row that merely prints it', () => {
    const before = [
      execution(
        'E9',
        'By weekday: Mon 740.7, Tue 951.0, Wed 1061.1, Thu 1121.8\n' +
          '- By weekday in `orders.csv`, the total revenue per day is highest on Thu (1121.8) and lowest on Mon (740.7).',
      ),
    ];
    // New data: Wednesday leads. The raw line still prints a Thu value (1607.4), which is not the highest.
    const after = [
      execution(
        'E9',
        'By weekday: Mon 1122.4, Tue 1542.5, Wed 1665.3, Thu 1607.4\n' +
          '- By weekday in `orders.csv`, the total revenue per day is highest on Wed (1665.3) and lowest on Mon (1122.4).',
      ),
    ];
    const answer =
      '- By weekday in `orders.csv`, the total revenue per day is highest on Thu (1121.8) and lowest on Mon (740.7).';
    const updated = updateAnswerNumbers(answer, before, after);
    expect(updated.text).toBe(
      '- By weekday in `orders.csv`, the total revenue per day is highest on Thu (1121.8 \\[stale\\]) and lowest on Mon (740.7 \\[stale\\]).',
    );
    // Anchored to the sentence the answer quotes, not to the raw row printed before it.
    const findings =
      '- By weekday in `orders.csv`, the total revenue per day is highest on Thu (#) and lowest on Mon (#).';
    expect(updated.numbers.map((number) => [number.status, number.label])).toEqual([
      ['stale', findings],
      ['stale', findings],
    ]);
    expect(updated.numbers[0]?.reason).toBe(`E9 no longer prints the line "${findings}"`);
  });

  it('updates a number whose clause and the clauses before it read the same, and marks stale one where either changed, on the same line', () => {
    const line = (leader: string, total: string, share: string, top: string, mean: string, low: string) =>
      `- By \`region\` in \`orders.csv\`: \`${leader}\` brings the largest total \`revenue\` (${total}, ${share} of it); the mean per row is highest for \`${top}\` (${mean}) and lowest for \`South\` (${low}).`;
    const before = [
      execution(
        'E12',
        `region count sum mean share\nNorth 373 103131 276.5 28.9%\nWest 233 89781 385.3 25.1%\n${line('North', '103131', '28.9%', 'West', '385.3', '268.0')}\n` +
          '- By `channel` in `orders.csv`: `Online` brings the largest total `revenue` (194720, 54.5% of it); the mean per row is highest for `Online` (325.6) and lowest for `Store` (255.0).',
      ),
    ];
    // West's revenue tripled: West leads now (the first clause changed), and still has the highest mean (the second did not,
    // but it follows "`North` brings …", which no longer holds). Online still brings the most, but Partner has the highest mean now.
    const after = [
      execution(
        'E12',
        `region count sum mean share\nWest 233 269344 1156.0 50.2%\nNorth 373 103131 276.5 19.2%\n${line('West', '269344', '50.2%', 'West', '1156.0', '268.0')}\n` +
          '- By `channel` in `orders.csv`: `Online` brings the largest total `revenue` (293520, 54.7% of it); the mean per row is highest for `Partner` (500.8) and lowest for `Store` (364.7).',
      ),
    ];
    const answer = [
      line('North', '103131', '28.9%', 'West', '385.3', '268.0'),
      '- By `channel` in `orders.csv`: `Online` brings the largest total `revenue` (194720, 54.5% of it); the mean per row is highest for `Online` (325.6) and lowest for `Store` (255.0).',
    ].join('\n');
    const updated = updateAnswerNumbers(answer, before, after);
    expect(updated.text).toBe(
      [
        line(
          'North',
          '103131 \\[stale\\]',
          '28.9% \\[stale\\]',
          'West',
          '385.3 \\[stale\\]',
          '268.0 \\[stale\\]',
        ),
        '- By `channel` in `orders.csv`: `Online` brings the largest total `revenue` (293520, 54.7% of it); the mean per row is highest for `Online` (325.6 \\[stale\\]) and lowest for `Store` (255.0 \\[stale\\]).',
      ].join('\n'),
    );
    // A later clause's label holds the words of the clauses before it, their numbers as #.
    expect(updated.numbers.find((number) => number.oldText === '385.3')).toMatchObject({
      status: 'stale',
      label:
        '- By `region` in `orders.csv`: `North` brings the largest total `revenue` (#, #% of it); the mean per row is highest for `West` (#) and lowest for `South` (#).',
    });
  });

  it('marks stale a number whose clause reads the same but an earlier clause of its line changed (the subject: North → West)', () => {
    const updated = updateAnswerNumbers(
      'The top region is North, with revenue 1200.5.',
      [execution('E1', 'Top region: North; revenue 1200.5')],
      [execution('E1', 'Top region: West; revenue 1500.5')],
    );
    expect(updated.text).toBe('The top region is North, with revenue 1200.5 \\[stale\\].');
    expect(updated.numbers.map((number) => [number.status, number.label])).toEqual([
      ['stale', 'Top region: North; revenue #'],
    ]);
  });

  it('marks stale a correlation whose partner column changed in the clause before it (`sqft` → `age`)', () => {
    const updated = updateAnswerNumbers(
      '`price` correlates most with `sqft` (r = 0.82).',
      [execution('E3', '- Strongest correlation with `price`: `sqft`; r = 0.82')],
      [execution('E3', '- Strongest correlation with `price`: `age`; r = 0.67')],
    );
    expect(updated.text).toBe('`price` correlates most with `sqft` (r = 0.82 \\[stale\\]).');
    expect(updated.numbers[0]?.label).toBe('- Strongest correlation with `price`: `sqft`; r = #');
  });

  it('updates a later clause when only the numbers of the clauses before it changed, their words the same', () => {
    const line = (total: string, share: string, mean: string, low: string) =>
      `- By \`channel\` in \`orders.csv\`: \`Online\` brings the largest total \`revenue\` (${total}, ${share} of it); the mean per row is highest for \`Online\` (${mean}) and lowest for \`Store\` (${low}).`;
    const updated = updateAnswerNumbers(
      line('194720', '54.5%', '325.6', '255.0'),
      [execution('E12', line('194720', '54.5%', '325.6', '255.0'))],
      [execution('E12', line('293520', '54.7%', '490.8', '364.7'))],
    );
    expect(updated.text).toBe(line('293520', '54.7%', '490.8', '364.7'));
    expect(updated.numbers.find((number) => number.oldText === '325.6')?.label).toBe(
      '- By `channel` in `orders.csv`: `Online` brings the largest total `revenue` (#, #% of it); the mean per row is highest for `Online` (#) and lowest for `Store` (#).',
    );
  });

  it('treats a line too long or with too many clauses as one place, so that its work stays linear', () => {
    const numbers = (count: number) => Array.from({ length: count }, (_, index) => `${index + 1}.5`);
    expect(placeLabels(numbers(MAX_CLAUSES).join('; '))).toHaveLength(MAX_CLAUSES);
    expect(placeLabels(numbers(MAX_CLAUSES + 1).join('; '))).toEqual([
      Array.from({ length: MAX_CLAUSES + 1 }, () => '#').join('; '),
    ]);
    const long = `total ${'x'.repeat(MAX_CLAUSED_LINE_LENGTH)} 1.5; mean 2.5`;
    expect(placeLabels(long)).toEqual([lineLabel(long)]);
    // 1 MiB of `;`-separated numbers on one line (hostile or odd output): one place, its label the whole line's.
    const line = (first: string) => {
      let text = first;
      for (let index = 11; text.length < 1024 * 1024; index++) text += `;${index}.5`;
      return text;
    };
    const before = line('1234.5');
    expect(placeLabels(before)).toEqual([lineLabel(before)]);
    const updated = updateAnswerNumbers(
      'The first value is 1234.5.',
      [execution('E1', before)],
      [execution('E1', line('2345.5'))],
    );
    expect(updated.text).toBe('The first value is 2345.5.');
    expect(updated.numbers[0]?.label).toBe(lineLabel(before));
  });

  it('marks a number stale when its line is gone or its cell failed, and keeps its old value', () => {
    const before = [execution('E1', 'mean revenue 297.7'), execution('E2', 'top region North 31.1%')];
    const after = [execution('E1', 'average revenue 310.2'), execution('E2', '', 'error')];
    const updated = updateAnswerNumbers('Mean 297.7; North has 31.1% of orders.', before, after);
    expect(updated.text).toBe('Mean 297.7 \\[stale\\]; North has 31.1% \\[stale\\] of orders.');
    expect(updated.numbers.map((number) => [number.status, number.reason])).toEqual([
      ['stale', 'E1 no longer prints the line "mean revenue #"'],
      ['stale', 'E2 ended error'],
    ]);
  });

  it('marks numbers no output printed as not grounded and leaves trivial ones, code and link text alone', () => {
    const before = [execution('E1', 'total 5400')];
    const after = [execution('E1', 'total 6100')];
    const answer = 'Total 5400, about 5500 by my guess; `x = 5400` in 3 steps, see [5400](#output-E1).';
    const updated = updateAnswerNumbers(answer, before, after);
    expect(updated.text).toBe(
      'Total 6100, about 5500 \\[not grounded\\] by my guess; `x = 5400` in 3 steps, see [5400](#output-E1).',
    );
  });

  it("does not take another table's line when a table is gone: a label printed fewer times is stale", () => {
    const before = [
      execution(
        'E1',
        'orders.csv\nregion has 4 distinct values; the most common is North (31.1%)\n' +
          'sales_plan.xlsx [Targets]\nregion has 4 distinct values; the most common is North (25.0%)',
      ),
    ];
    // orders.csv is empty now: only the Targets line is printed, and it would be the "first" such line.
    const after = [
      execution(
        'E1',
        'orders.csv: empty\nsales_plan.xlsx [Targets]\nregion has 4 distinct values; the most common is North (25.0%)',
      ),
    ];
    const updated = updateAnswerNumbers('In orders, North has 31.1% of the rows.', before, after);
    expect(updated.text).toBe('In orders, North has 31.1% \\[stale\\] of the rows.');
    expect(updated.numbers[0]?.reason).toBe(
      'E1 prints the line "region has # distinct values; the most common is North (#%)" once, not 2 times: which one is this number\'s cannot be told',
    );
  });

  it('says so when a printed sign flips where the answer wrote none: the new value with its sign, marked', () => {
    const before = [execution('E1', 'IQR fences [2, 14]\nchange -0.25\nchange in units -14')];
    const after = [execution('E1', 'IQR fences [-2, 14]\nchange 0.1\nchange in units -16')];
    // "fell by 0.25" took its direction from the words: now the output says it rose.
    const answer = 'Outside the fences [2, 14]; the mean fell by 0.25 and units by 14.';
    const updated = updateAnswerNumbers(answer, before, after);
    expect(updated.text).toBe(
      'Outside the fences [-2 \\[sign changed\\], 14]; the mean fell by 0.1 \\[sign changed\\] and units by 16.',
    );
    expect(updated.numbers.map((number) => [number.status, number.reason])).toEqual([
      ['sign-changed', 'E1 printed 2, now -2'],
      ['unchanged', null],
      ['sign-changed', 'E1 printed -0.25, now 0.1'],
      ['updated', null],
    ]);
  });

  it('writes the new number like the old: decimals, separators, percent of a printed ratio, sign', () => {
    const before = [execution('E1', 'share 0.245\ntotal 12345.678\nchange -3.3\nmean 6.391960')];
    const after = [execution('E1', 'share 0.3125\ntotal 23456.7\nchange 2.1\nmean 7.5')];
    const answer = 'Share 24.5%, total 12,345.68, change -3.3, mean 6.39.';
    const updated = updateAnswerNumbers(answer, before, after);
    // 24.5% was the ratio as printed, so 31.25% is too; 12,345.68 had rounded a printed 12345.678, and
    // 23,456.7 has only one decimal printed (none made up); no sign was printed.
    expect(updated.text).toBe('Share 31.25%, total 23,456.7, change 2.1, mean 7.5.');
  });

  it('writes an updated number as the new output prints it, not rounded to the old decimals (fences [1, 9] of a printed [-0.5, 11.50])', () => {
    const line = (low: string, high: string, count: string) =>
      `- \`units\` (\`orders.csv\`): ${count} values (1.3%) outside the IQR fences [${low}, ${high}]; the most extreme is 12.`;
    const before = [execution('E11', line('1', '9', '16') + '\nmean 0.0412')];
    const after = [execution('E11', line('-0.5', '11.50', '12') + '\nmean 0.0031')];
    const answer = `${line('1', '9', '16').slice(2)} Mean 0.04.`;
    const updated = updateAnswerNumbers(answer, before, after);
    // 0.04 rounded a printed 0.0412: rounded alike, but never to a 0.00 the output did not print.
    expect(updated.text).toBe(`${line('-0.5 \\[sign changed\\]', '11.50', '12').slice(2)} Mean 0.003.`);
    expect(updated.numbers.find((number) => number.oldText === '9')).toMatchObject({
      status: 'updated',
      newText: '11.50',
    });
  });

  it('carries small counts over only where the words before them agree, and leaves the others alone', () => {
    const before = [execution('E1', '- `units` ranges from 2 to 12 (median 5, mean 5.16).\ntables: 4')];
    const after = [execution('E1', '- `units` ranges from 1 to 9 (median 4, mean 4.85).\ntables: 4')];
    const answer = '`units` ranges from 2 to 12 (median 5, mean 5.16); we made 3 charts.';
    const updated = updateAnswerNumbers(answer, before, after);
    expect(updated.text).toBe('`units` ranges from 1 to 9 (median 4, mean 4.85); we made 3 charts.');
    // "3 charts": no output printed a 3 after those words; neither carried nor marked.
    expect(updated.numbers.map((number) => number.oldText)).toEqual(['2', '12', '5', '5.16']);
  });

  it('marks a small count stale when its line is gone, never taking a 4 another line printed after the same words', () => {
    const before = [
      execution(
        'E8',
        '- `region` (`orders.csv`): 4 distinct values; the top ones are `North` 31.1%, `East` 29.8%.',
      ),
      execution(
        'E11',
        '- `unit_price` (`orders.csv`): 57 values (4.8%) outside the IQR fences\norders.csv / discount_pct: mean 4',
      ),
    ];
    // The regions are now equally common: E8's line has other words (the 4's clause too), and E11 still
    // prints numbers after "orders.csv".
    const after = [
      execution('E8', '- `region` (`orders.csv`): 4 distinct values, all equally common (25.0% each).'),
      execution(
        'E11',
        '- `unit_price` (`orders.csv`): 52 values (4.7%) outside the IQR fences\norders.csv / discount_pct: mean 5',
      ),
    ];
    const answer = '- `region` (`orders.csv`): 4 distinct values; the top ones are `North` 31.1%.';
    const updated = updateAnswerNumbers(answer, before, after);
    expect(updated.text).toBe(
      '- `region` (`orders.csv`): 4 \\[stale\\] distinct values; the top ones are `North` 31.1% \\[stale\\].',
    );
    expect(updated.numbers[0]).toMatchObject({ status: 'stale', outputId: 'E8' });
  });

  it('carries ISO dates over by the same anchors', () => {
    const before = [execution('E1', 'order_date: 2024-01-01 to 2024-12-31')];
    const after = [execution('E1', 'order_date: 2024-04-01 to 2024-06-30')];
    const updated = updateAnswerNumbers('Orders span 2024-01-01 to 2024-12-31.', before, after);
    expect(updated.text).toBe('Orders span 2024-04-01 to 2024-06-30.');
  });

  it('finds numbers in headings, lists and tables of the answer at their place in its text', () => {
    const before = [execution('E1', 'North 1250\nSouth 800')];
    const after = [execution('E1', 'North 1300\nSouth 900')];
    const answer =
      '## North at 1250\n\n- South: 800\n\n| region | revenue |\n| --- | --- |\n| North | 1250 |\n';
    const updated = updateAnswerNumbers(answer, before, after);
    expect(updated.text).toBe(
      '## North at 1300\n\n- South: 900\n\n| region | revenue |\n| --- | --- |\n| North | 1300 |\n',
    );
  });
});
