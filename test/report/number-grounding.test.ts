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

  it('matches a percentage to a printed percentage, a printed ratio, or a plain number printed as written', () => {
    // E1 printed the ratio 0.245: it grounds 24.5% and, rounded, 25%.
    expect(grounded('a share of 24.5% and 25%')).toEqual([
      ['24.5%', 'E1'],
      ['25%', 'E1'],
    ]);
    // "share 24.5" without a % sign grounds "24.5%" (the digits as written), not "25%" (a rounding of
    // a plain number that nothing says is a percentage).
    const plain = buildNumberIndex([{ outputId: 'E2', text: 'share 24.5' }]);
    expect(groundSegment('a share of 24.5% and 25%', plain).map((number) => number.outputId)).toEqual([
      'E2',
      null,
    ]);
    const ratioOnly = buildNumberIndex([{ outputId: 'E7', text: 'share 0.2451' }]);
    expect(groundSegment('a share of 24.5% or 24.51%', ratioOnly).map((number) => number.outputId)).toEqual([
      'E7',
      'E7',
    ]);
    const printedPercent = buildNumberIndex([
      { outputId: 'E3', text: 'North 373 (31.14%)\nchurn pct 12.38' },
    ]);
    expect(
      groundSegment('North has 31.1% and churn 12.4%', printedPercent).map((number) => number.outputId),
    ).toEqual(['E3', 'E3']);
  });

  it('does not ground a percentage with an unrelated plain number', () => {
    const skewness = buildNumberIndex([
      { outputId: 'E7', text: 'discount_pct: mean 8.69, std 5.23, skewness 0.152' },
    ]);
    // "discount_pct" is a column name on the line, not a percent sign: 0.152 rounds to 0.2 but is no percentage.
    const [number] = groundSegment('2 values (0.2%) outside the fences', skewness);
    expect(number?.verified).toBe(false);
  });

  it('lets an unsigned number match a printed negative one and reads scientific notation', () => {
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

  it('links to the output that printed the number and keeps the printed text, sign and % sign', () => {
    const [number] = groundSegment('mean 6.39', index);
    expect(number).toMatchObject({ verified: true, outputId: 'E1', matchedText: '6.391960' });
    const [negative, percent] = groundSegment('fell by -0.25, a 24.5% share', index);
    expect(negative).toMatchObject({ negative: true, outputId: 'E1', matchedText: '-0.25' });
    expect(percent).toMatchObject({ outputId: 'E1', matchedText: '0.245' });
  });
});

describe('signs', () => {
  it('grounds a number written with a minus sign only by a printed negative number', () => {
    const signed = buildNumberIndex([
      { outputId: 'E7', text: 'unit_price: mean 63.60, std 52.86\nmean units 5.16' },
      { outputId: 'E9', text: 'change -3.3%' },
    ]);
    expect(groundSegment('fences [-52, 186]', signed).map((number) => number.verified)).toEqual([
      false,
      false,
    ]);
    expect(groundSegment('Revenue fell by -5.2% from Q1 to Q4', signed)[0]?.verified).toBe(false);
    // Prose carries the sign in words: an unsigned number may match a printed negative one.
    expect(groundSegment('fell by 3.3% and by -3.3%', signed).map((number) => number.outputId)).toEqual([
      'E9',
      'E9',
    ]);
    expect(groundSegment('std 52.86, down -63.60', signed).map((number) => number.verified)).toEqual([
      true,
      false,
    ]);
  });

  it('reads a printed minus sign only when it stands alone, and a zero has no sign', () => {
    const printed = buildNumberIndex([{ outputId: 'E1', text: 'years 1990-2020, delta -0.001, x-52.5' }]);
    expect(groundSegment('in -2020', printed)[0]?.verified).toBe(false);
    expect(groundSegment('a change of -0.00', printed)[0]?.verified).toBe(true);
    expect(groundSegment('at -52.5', printed)[0]?.verified).toBe(false);
  });
});

/** Excerpts of the outputs of the offline analyst on workspace-examples/sales (lines as printed). */
const salesOutputs = [
  {
    outputId: 'E4',
    text: 'sales_plan.xlsx [Targets]: 16 rows × 4 columns (`region`, `quarter`, `revenue_target`, `store_count`)',
  },
  {
    outputId: 'E7',
    text: [
      'orders.csv / units: mean 5.16, median 5, std 1.76, skewness 0.578',
      'orders.csv / unit_price: mean 63.60, median 53.15, std 52.86, skewness 2.02',
      'orders.csv / discount_pct: mean 8.69, median 9, std 5.23, skewness 0.152',
    ].join('\n'),
  },
  {
    outputId: 'E8',
    text: '- `supplier` (`sales_plan.xlsx [Products]`): 3 distinct values; the top ones are `Northwind` 50.0%, `Kestrel Ltd` 37.5%, `Alpen AG` 12.5%.',
  },
  { outputId: 'E10', text: 'product      revenue\nWater Filter       186.3' },
  {
    outputId: 'E11',
    text: [
      '                     table         column    Q1    Q3 lower fence upper fence  outliers share most extreme',
      'sales_plan.xlsx [Products]     list_price 37.25 96.75         -52         186         1 12.5%          249',
      '                orders.csv     unit_price 31.56 87.63      -52.55       171.7        57  4.8%        261.3',
      '                orders.csv          units     4     6           1           9        16  1.3%           12',
      '                orders.csv   discount_pct     5    12       -5.50       22.50         2  0.2%           23',
      '',
      'Findings:',
      '- `list_price` (`sales_plan.xlsx [Products]`): 1 value (12.5%) outside the IQR fences [-52, 186]; the most extreme is 249.',
      '- `unit_price` (`orders.csv`): 57 values (4.8%) outside the IQR fences [-52.55, 171.7]; the most extreme is 261.3.',
      '- `units` (`orders.csv`): 16 values (1.3%) outside the IQR fences [1, 9]; the most extreme is 12.',
      '- `discount_pct` (`orders.csv`): 2 values (0.2%) outside the IQR fences [-5.50, 22.50]; the most extreme is 23.',
    ].join('\n'),
  },
];

describe('which output a number links to', () => {
  const salesIndex = buildNumberIndex(salesOutputs);
  function links(segment: string, context = {}): Array<[string, string | null, string | null]> {
    return groundSegment(segment, salesIndex, context).map((number) => [
      number.text,
      number.outputId,
      number.matchedText,
    ]);
  }

  it('links the outliers the answer quotes to the output that printed them in the same words', () => {
    // The answer's text runs around inline code, as the markdown renderer hands them over.
    expect(links('): 1 value (12.5%) outside the IQR fences [-52, 186]; the most extreme is 249.')).toEqual([
      ['12.5%', 'E11', '12.5%'],
      ['-52', 'E11', '-52'],
      ['186', 'E11', '186'],
      ['249', 'E11', '249'],
    ]);
    expect(links('): 16 values (1.3%) outside the IQR fences [1, 9]; the most extreme is 12.')).toEqual([
      ['16', 'E11', '16'],
      ['1.3%', 'E11', '1.3%'],
      ['12', 'E11', '12'],
    ]);
    expect(
      links('): 2 values (0.2%) outside the IQR fences [-5.50, 22.50]; the most extreme is 23.'),
    ).toEqual([
      ['0.2%', 'E11', '0.2%'],
      ['-5.50', 'E11', '-5.50'],
      ['22.50', 'E11', '22.50'],
      ['23', 'E11', '23'],
    ]);
  });

  it('links a number to the output whose words it shares even when another printed it first', () => {
    expect(links('The Targets sheet has 16 rows × 4 columns')).toEqual([['16', 'E4', '16']]);
    expect(links('`Alpen AG` 12.5%')).toEqual([['12.5%', 'E8', '12.5%']]);
    expect(links('a skewness of 0.15 for discount_pct')).toEqual([['0.15', 'E7', '0.152']]);
  });

  it('uses the text around the segment when the caller gives it', () => {
    expect(links('16', { textBefore: 'The Targets sheet has ', textAfter: ' rows' })).toEqual([
      ['16', 'E4', '16'],
    ]);
    expect(links('16', { textBefore: 'units: ', textAfter: ' values (1.3%) outside' })).toEqual([
      ['16', 'E11', '16'],
    ]);
  });

  it('prefers the exact value, then the latest output, when the words do not decide', () => {
    const index = buildNumberIndex([
      { outputId: 'E1', text: 'a 12.53' },
      { outputId: 'E2', text: 'b 12.5' },
      { outputId: 'E3', text: 'c 12.54' },
      { outputId: 'E4', text: 'q 77' },
      { outputId: 'E5', text: 'r 77' },
    ]);
    expect(
      groundSegment('x 12.5 and 77', index).map((number) => [number.outputId, number.matchedText]),
    ).toEqual([
      ['E2', '12.5'],
      ['E5', '77'],
    ]);
  });
});
