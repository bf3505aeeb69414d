import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/agent/language-model.ts';
import { offlineAnalystTurn } from '../../src/agent/offline-analyst/index.ts';
import { parseSteps } from '../../src/agent/tag-parser.ts';
import { column, csvFile, firstMessage } from './support/canned-conversation.ts';

const files = [csvFile('orders.csv', [column('unit_price', 'number'), column('region', 'category')])];
const answered: ChatMessage[] = [
  { role: 'user', content: firstMessage('Give me an overview.', files) },
  { role: 'assistant', content: '<Answer>Overview.</Answer>' },
];

function steps(messages: ChatMessage[]) {
  return parseSteps(offlineAnalystTurn({ messages }));
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

  it('describes a table the follow-up names, from the profile', () => {
    const answer = steps([...answered, { role: 'user', content: 'What is in orders?' }]).find(
      (step) => step.kind === 'answer',
    );
    expect(answer?.text).toMatch(/`orders\.csv`: \d+ rows, 2 columns: `unit_price`, `region`/);
  });

  it('says plainly that it cannot answer a follow-up that names neither a column nor a table', () => {
    const answer = steps([...answered, { role: 'user', content: 'Why did sales fall?' }]).find(
      (step) => step.kind === 'answer',
    );
    expect(answer?.text).toContain('cannot answer it');
    expect(answer?.text).toContain('`unit_price`, `region`');
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
