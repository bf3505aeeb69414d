import { describe, expect, it } from 'vitest';
import { parseDataSection } from '../../src/agent/first-message.ts';
import {
  matchInstructionColumns,
  nameableColumns,
  normalizeName,
} from '../../src/agent/offline-analyst/column-match.ts';
import { column, csvFile, firstMessage } from './support/canned-conversation.ts';

const salesEntries = parseDataSection(
  firstMessage('x', [
    csvFile('orders.csv', [
      column('order_id', 'id'),
      column('order_date', 'datetime'),
      column('region', 'category'),
      column('channel', 'category'),
      column('product', 'category'),
      column('category', 'category'),
      column('units', 'integer'),
      column('unit_price', 'number'),
      column('discount_pct', 'number'),
      column('revenue', 'number'),
    ]),
  ]),
);

describe('matching instruction words to columns', () => {
  it('finds the sales columns in the order the instruction names them, plurals included', () => {
    expect(
      matchInstructionColumns(
        'Which regions, channels and product categories drive revenue, and how does the discount relate to the units sold?',
        salesEntries,
      ),
    ).toEqual(['region', 'channel', 'product', 'category', 'revenue', 'discountpct', 'units']);
  });

  it('ignores case, spaces and underscores, and prefers the longest phrase', () => {
    expect(matchInstructionColumns('Is the UNIT PRICE higher online?', salesEntries)).toEqual(['unitprice']);
    expect(matchInstructionColumns('plot Order-Date against Revenue', salesEntries)).toEqual([
      'orderdate',
      'revenue',
    ]);
  });

  it('names no column for a generic instruction', () => {
    expect(matchInstructionColumns('Generate a data science report.', salesEntries)).toEqual([]);
    expect(
      matchInstructionColumns('Describe what these files contain and how clean they are.', salesEntries),
    ).toEqual([]);
  });

  it('does not match a word shared by many columns', () => {
    const entries = parseDataSection(
      firstMessage('x', [
        csvFile('a.csv', [
          column('score_math', 'number'),
          column('score_art', 'number'),
          column('score_music', 'number'),
          column('score_sport', 'number'),
        ]),
      ]),
    );
    expect(matchInstructionColumns('Compare the scores', entries)).toEqual([]);
    // A distinctive part still names its column.
    expect(matchInstructionColumns('Compare the math scores', entries)).toEqual(['scoremath']);
  });

  it('normalizes names the way the kernel does', () => {
    expect(normalizeName('Gasto total 2011')).toBe('gastototal2011');
    expect(normalizeName('Descripción')).toBe('descripción');
    expect(normalizeName('ALL\nBONDS\nISSUED')).toBe('allbondsissued');
  });
});

describe('file names in the instruction', () => {
  it('name no column: "orders.csv" is not `order_id`, "longest_absense_from_school.csv" not `school`', () => {
    const entries = parseDataSection(
      firstMessage('x', [
        csvFile('orders.csv', [column('order_id', 'id'), column('order_date', 'datetime')]),
        csvFile('longest_absense_from_school.csv', [column('name', 'id'), column('month', 'integer')]),
        csvFile('enrolled.csv', [column('name', 'id'), column('school', 'category')]),
      ]),
    );
    expect(
      matchInstructionColumns(
        'What does orders.csv show?\n\n(Start with: orders.csv, longest_absense_from_school.csv.)',
        entries,
      ),
    ).toEqual([]);
    // The columns themselves are still named.
    expect(matchInstructionColumns('Compare the school by month in enrolled.csv', entries)).toEqual([
      'school',
      'month',
    ]);
  });
});

describe('the columns a follow-up can name', () => {
  it('lists as nameable only the columns whose own name, asked, selects them', () => {
    const entries = parseDataSection(
      firstMessage('x', [
        csvFile('budget.csv', [
          column('Gasto total 2011', 'number'),
          column('GF', 'category'),
          column('value', 'number'),
          column('Unnamed: 3', 'number'),
        ]),
      ]),
    );
    // "GF" is too short to match, "value" is a word of the task, and the kernel calls "Unnamed: 3" `column_4`.
    expect(nameableColumns(entries)).toEqual(['gastototal2011']);
    expect(nameableColumns(salesEntries)).toEqual(
      matchInstructionColumns(
        'order_id order_date region channel product category units unit_price discount_pct revenue',
        salesEntries,
        20,
      ),
    );
  });
});
