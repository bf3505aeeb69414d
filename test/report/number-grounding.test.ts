import { describe, expect, it } from 'vitest';
import {
  buildNumberIndex,
  findNumberMentions,
  groundSegment,
  summarizeGrounding,
} from '../../src/trace/number-grounding.ts';

const describeOutput = `              name school        month
count         1194   1194  1194.000000
mean           NaN    NaN     6.391960
std            NaN    NaN     3.750224
ratio 0.245
negative -0.25
big 1.5e+06
csv 100,200,300`;

const index = buildNumberIndex([
  { outputId: 'E1', text: describeOutput },
  { outputId: 'E2', text: 'total revenue 2,500,000.75\nshare 24.5' },
]);

function texts(segment: string, context = {}): string[] {
  return findNumberMentions(segment, context).map((mention) => mention.text);
}

describe('findNumberMentions', () => {
  it('finds decimals, grouped thousands and percentages with their offsets', () => {
    const segment = 'Mean month 6.39 over 1,194 rows; 24.5% of them.';
    const mentions = findNumberMentions(segment);
    expect(
      mentions.map((mention) => [mention.text, mention.value, mention.decimals, mention.percent]),
    ).toEqual([
      ['6.39', 6.39, 2, false],
      ['1,194', 1194, 0, false],
      ['24.5%', 24.5, 1, true],
    ]);
    for (const mention of mentions) expect(segment.slice(mention.start, mention.end)).toBe(mention.text);
  });

  it('leaves out small whole numbers, identifiers, ordinals, hyphenated names, dates and times', () => {
    expect(
      texts('The 3 schools in E3 of DeepAnalyze-8B, the 2nd run, COVID-19, on 2024-01-15 at 12:30'),
    ).toEqual([]);
  });

  it('keeps small numbers that carry decimals or a percent sign', () => {
    expect(texts('p = 0.01 and 7% and 7.0')).toEqual(['0.01', '7%', '7.0']);
  });

  it('skips section numbers and years in headings but checks years in body text', () => {
    expect(texts('12. Results for 2019 and 1,250 users', { inHeading: true, atLineStart: true })).toEqual([
      '1,250',
    ]);
    expect(texts('Sales peaked in 2019.')).toEqual(['2019']);
  });

  it('shows a standalone minus sign with its number, but not a range dash', () => {
    expect(texts('fences [-52.5, 186.5], change -0.25, range 1990-2020')).toEqual([
      '-52.5',
      '186.5',
      '-0.25',
      '1990',
      '2020',
    ]);
    expect(findNumberMentions('was -0.25')[0]?.value).toBe(0.25);
  });

  it('does not treat a trailing full stop as a decimal point', () => {
    expect(texts('There were 1194.')).toEqual(['1194']);
  });
});

describe('groundSegment', () => {
  function grounded(segment: string): Array<[string, string | null]> {
    return groundSegment(segment, index).map((number) => [number.text, number.outputId]);
  }

  it('matches rounded, truncated and exactly printed numbers', () => {
    expect(grounded('mean 6.39, 6.4, 6.391960, std 3.75, 3.8 and 1194 rows')).toEqual([
      ['6.39', 'E1'],
      ['6.4', 'E1'],
      ['6.391960', 'E1'],
      ['3.75', 'E1'],
      ['3.8', 'E1'],
      ['1194', 'E1'],
    ]);
  });

  it('ignores thousands separators on either side', () => {
    expect(grounded('1,194 records, revenue 2500000.75 or 2,500,001')).toEqual([
      ['1,194', 'E1'],
      ['2500000.75', 'E2'],
      ['2,500,001', 'E2'],
    ]);
  });

  it('matches a percentage to a printed ratio or a printed percentage', () => {
    expect(grounded('a share of 24.5% and 25%')).toEqual([
      ['24.5%', 'E2'],
      ['25%', 'E2'],
    ]);
    const ratioOnly = buildNumberIndex([{ outputId: 'E7', text: 'share 0.2451' }]);
    expect(groundSegment('a share of 24.5% or 24.51%', ratioOnly).map((number) => number.outputId)).toEqual([
      'E7',
      'E7',
    ]);
  });

  it('ignores the sign and reads scientific notation', () => {
    expect(grounded('a change of 0.25 on 1,500,000 units')).toEqual([
      ['0.25', 'E1'],
      ['1,500,000', 'E1'],
    ]);
  });

  it('reads comma-separated printed values as separate numbers too', () => {
    expect(grounded('values 200 and 300')).toEqual([
      ['200', 'E1'],
      ['300', 'E1'],
    ]);
  });

  it('marks a number that no output printed as unverified', () => {
    const numbers = groundSegment('χ² = 8.92 and 6.38 and 1195', index);
    expect(numbers.map((number) => number.verified)).toEqual([false, false, false]);
    expect(summarizeGrounding(numbers)).toEqual({ checked: 3, verified: 0, unverified: 3 });
  });

  it('links to the first output that printed the number and keeps the printed text', () => {
    const [number] = groundSegment('mean 6.39', index);
    expect(number).toMatchObject({ verified: true, outputId: 'E1', matchedText: '6.391960' });
  });
});
