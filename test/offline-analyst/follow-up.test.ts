import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/agent/language-model.ts';
import { askUnansweredReply } from '../../src/agent/model-notes.ts';
import { offlineAnalystTurn } from '../../src/agent/offline-analyst/index.ts';
import { parseSteps } from '../../src/agent/tag-parser.ts';
import type { FileProfile } from '../../src/sandbox/workspace-profile.ts';
import { column, csvFile, firstMessage } from './support/canned-conversation.ts';

const files = [csvFile('orders.csv', [column('unit_price', 'number'), column('region', 'category')])];
const answered: ChatMessage[] = [
  { role: 'user', content: firstMessage('Give me an overview.', files) },
  { role: 'assistant', content: '<Answer>Overview.</Answer>' },
];

function steps(messages: ChatMessage[]) {
  return parseSteps(offlineAnalystTurn({ messages }));
}

/** A workbook whose sheets are called `data` and `notes`, as the profile lists them. */
function workbook(name: string): FileProfile {
  const [sheet] = csvFile(name, [column('revenue', 'number'), column('region', 'category')]).tables;
  if (sheet === undefined) throw new Error('no table');
  return {
    ...csvFile(name, []),
    format: 'excel',
    tables: [
      { ...sheet, name: 'data' },
      { ...sheet, name: 'notes', columns: [column('remark', 'text')] },
    ],
  };
}

/** The conversation after a first question was answered, on `files`. */
function answeredOn(files: FileProfile[]): ChatMessage[] {
  return [
    { role: 'user', content: firstMessage('Give me an overview.', files) },
    { role: 'assistant', content: '<Answer>Overview.</Answer>' },
  ];
}

function codeOf(messages: ChatMessage[]): string {
  return steps(messages).find((step) => step.kind === 'code')?.text ?? '';
}

describe('the offline analyst in a thread', () => {
  it('answers a follow-up that names columns with a breakdown cell, then quotes what it printed', () => {
    const question: ChatMessage = { role: 'user', content: 'And the unit price by region?' };
    const first = steps([...answered, question]);
    const code = first.find((step) => step.kind === 'code');
    expect(code?.text).toContain('wanted = ["unitprice", "region"]');
    expect(first.find((step) => step.kind === 'analyze')?.text).toContain('`unit_price`, `region`');

    const result =
      'Columns named in the instruction, found in orders.csv: unit_price, region\nFindings:\n- By `region`: North brings the largest total.\n';
    const second = steps([
      ...answered,
      question,
      { role: 'assistant', content: `<Code>${code?.text ?? ''}</Code>` },
      { role: 'user', content: `<Execute>\n${result}</Execute>` },
    ]);
    const answer = second.find((step) => step.kind === 'answer')?.text ?? '';
    expect(answer).toContain('No language model was used.');
    expect(answer).toContain('- By `region`: North brings the largest total.');
  });

  it('describes a table the follow-up names with a cell in the kernel, then quotes what it printed, not the profile', () => {
    const question: ChatMessage = { role: 'user', content: 'What is in orders?' };
    const first = steps([...answered, question]);
    expect(first.some((step) => step.kind === 'answer')).toBe(false);
    const code = first.find((step) => step.kind === 'code')?.text ?? '';
    expect(code).toContain('("orders.csv", None),');
    expect(code).toContain('nameable = set(["unitprice", "region"])');

    const result =
      'orders.csv: 29 rows × 2 columns\nFindings:\n- `orders.csv`: 29 rows × 2 columns, as loaded in this conversation.\n- `orders.csv`: a follow-up can name `unit_price`, `region`.\n';
    const second = steps([
      ...answered,
      question,
      { role: 'assistant', content: `<Code>${code}</Code>` },
      { role: 'user', content: `<Execute>\n${result}</Execute>` },
    ]);
    const answer = second.find((step) => step.kind === 'answer')?.text ?? '';
    expect(answer).toContain('- `orders.csv`: 29 rows × 2 columns, as loaded in this conversation.');
    // The profile's row count (canned: 100) is not the answer's.
    expect(answer).not.toMatch(/\b100 rows/);
  });

  it('asks which column or table is meant when a follow-up names none, instead of answering', () => {
    const turn = steps([...answered, { role: 'user', content: 'Why did sales fall?' }]);
    expect(turn.some((step) => step.kind === 'answer')).toBe(false);
    expect(turn.some((step) => step.kind === 'code')).toBe(false);
    const ask = turn.find((step) => step.kind === 'ask')?.text ?? '';
    expect(ask).toMatch(/^Which column or table is this question about\?/);
    expect(ask).toContain('Columns: `unit_price`, `region`.');
    expect(ask).toContain('Files: `orders.csv`.');
    expect(ask).toContain('no language model');
    expect(ask).toContain('`--model`');
  });

  it('offers, when it asks back, only column names a question can use', () => {
    const padded = [csvFile('padded.csv', [column('Unnamed: 0', 'text'), column('region', 'category')])];
    const ask = steps([
      { role: 'user', content: firstMessage('Give me an overview.', padded) },
      { role: 'assistant', content: '<Answer>Overview.</Answer>' },
      { role: 'user', content: 'Why did sales fall?' },
    ]).find((step) => step.kind === 'ask');
    expect(ask?.text).toContain('Columns: `region`.');
    expect(ask?.text).not.toContain('Unnamed');
  });

  it('reads the reply to its question as a follow-up: a reply that names a column gets the breakdown', () => {
    const question: ChatMessage = { role: 'user', content: 'Why did sales fall?' };
    const asked = offlineAnalystTurn({ messages: [...answered, question] });
    const reply: ChatMessage = { role: 'user', content: 'the unit price' };
    expect(codeOf([...answered, question, { role: 'assistant', content: asked }, reply])).toContain(
      'wanted = ["unitprice"]',
    );
  });

  it('does not ask again when nobody can reply (a one-shot run): it describes every table and says what it assumed', () => {
    const question: ChatMessage = { role: 'user', content: 'Why did sales fall?' };
    const asked: ChatMessage = {
      role: 'assistant',
      content: offlineAnalystTurn({ messages: [...answered, question] }),
    };
    const noReply: ChatMessage = { role: 'user', content: askUnansweredReply };
    const first = steps([...answered, question, asked, noReply]);
    expect(first.some((step) => step.kind === 'ask')).toBe(false);
    const code = first.find((step) => step.kind === 'code')?.text ?? '';
    expect(code).toContain('named = None');
    const result =
      'Findings:\n- `orders.csv`: 29 rows × 2 columns, as loaded in this conversation.\n\nfacts: {"stage": "tables"}\n';
    const answer = steps([
      ...answered,
      question,
      asked,
      noReply,
      { role: 'assistant', content: `<Code>${code}</Code>` },
      { role: 'user', content: `<Execute>\n${result}</Execute>` },
    ]).find((step) => step.kind === 'answer')?.text;
    expect(answer).toContain('assumes it is about the data as a whole');
    expect(answer).toContain('- `orders.csv`: 29 rows × 2 columns, as loaded in this conversation.');
  });

  it.each(['Describe the data', 'summarize the data', 'describe this dataset', 'What is in the data?'])(
    'takes "%s" as a question about every table, not about a sheet called `data`',
    (question) => {
      const files = [workbook('book.xlsx'), csvFile('orders.csv', [column('units', 'number')])];
      const code = codeOf([...answeredOn(files), { role: 'user', content: question }]);
      expect(code).toContain('named = None');
      expect(code).not.toContain('("book.xlsx", "data")');
    },
  );

  it('describes every table, then quotes what the kernel printed', () => {
    const question: ChatMessage = { role: 'user', content: 'Describe the data' };
    const code = codeOf([...answered, question]);
    const result =
      'orders.csv: 29 rows × 2 columns\nFindings:\n- `orders.csv`: 29 rows × 2 columns, as loaded in this conversation.\n';
    const answer = steps([
      ...answered,
      question,
      { role: 'assistant', content: `<Code>${code}</Code>` },
      { role: 'user', content: `<Execute>\n${result}</Execute>` },
    ]).find((step) => step.kind === 'answer')?.text;
    expect(answer).toContain('Every table, as the kernel of this conversation holds it:');
    expect(answer).toContain('- `orders.csv`: 29 rows × 2 columns, as loaded in this conversation.');
  });

  it.each([
    ['Describe the `data` sheet', '("book.xlsx", "data")'],
    ['what is in sheet data?', '("book.xlsx", "data")'],
    ['describe the data table', '("book.xlsx", "data")'],
    ['Describe "data"', '("book.xlsx", "data")'],
    ['describe the notes', '("book.xlsx", "notes")'],
    ['What is in data.csv?', '("data.csv", None)'],
    ['and the book?', '("book.xlsx", None)'],
  ])('still takes "%s" as naming a table', (question, named) => {
    const files = [workbook('book.xlsx'), csvFile('data.csv', [column('units', 'number')])];
    const code = codeOf([...answeredOn(files), { role: 'user', content: question }]);
    expect(code).toContain(named);
    expect(code).not.toContain('named = None');
  });

  it('does not take "the data" in a question it cannot answer for the data file: it asks', () => {
    const files = [csvFile('data.csv', [column('units', 'number')])];
    const turn = steps([...answeredOn(files), { role: 'user', content: 'Why is the data so noisy?' }]);
    expect(turn.some((step) => step.kind === 'ask')).toBe(true);
  });

  it('reads the question after a replay note the loop put before it', () => {
    const code = steps([
      ...answered,
      {
        role: 'user',
        content: 'The sandbox was restarted and the 3 earlier cells were run again.\n\nAnd the region?',
      },
    ]).find((step) => step.kind === 'code');
    expect(code?.text).toContain('wanted = ["region"]');
  });
});
