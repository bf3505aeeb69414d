import { describe, expect, it } from 'vitest';
import { readConversation, readFacts, readFindings } from '../../src/agent/offline-analyst/conversation.ts';

const cell = (stage: string): string =>
  `<Analyze>why</Analyze>\n<Code>\n\`\`\`python\n# offline-analyst step: ${stage}\nprint(1)\n\`\`\`\n</Code>`;
const first = '# Instruction\nFind the outliers.\n\n# Data\nFile 1: {"name": "a.csv", "size": "1.0KB"}';

describe('reading what the cells printed', () => {
  it('takes the findings verbatim and the last facts line', () => {
    const text =
      'table\n  x 1\n\nFindings:\n- `a` ranges from 1 to 9.5.\n- 12.5% missing.\n\nfacts: {"stage": "overview"}\nfacts: {"stage": "load", "focus": ["a.csv"], "kinds": {"number": 2}}';
    expect(readFindings(text)).toEqual(['`a` ranges from 1 to 9.5.', '12.5% missing.']);
    expect(readFacts(text)).toEqual({ stage: 'load', focus: ['a.csv'], kinds: { number: 2 } });
  });

  it('treats a facts line cut off by an output cap as absent', () => {
    expect(readFacts('facts: {"stage": "load", "focus": ["a.c')).toBeNull();
    expect(readFacts('facts: {"focus": "not a list"}')).toBeNull();
    expect(readFindings('no findings here')).toEqual([]);
    expect(readFindings('Findings:\n- a data value\n\nFindings:\n- the real one')).toEqual(['the real one']);
  });
});

describe('reading the conversation', () => {
  it('pairs each cell with its result and reads errors and lost state', () => {
    const conversation = readConversation([
      { role: 'user', content: first },
      { role: 'assistant', content: cell('setup') },
      { role: 'execute', content: 'Helpers ready.' },
      { role: 'assistant', content: cell('load') },
      {
        role: 'execute',
        content: '[Error]:\nTraceback (most recent call last):\n  File "<cell>", line 1\nKeyError: \'x\'',
      },
      { role: 'assistant', content: cell('overview') },
      {
        role: 'execute',
        content:
          "[Error]:\nNameError: name 'kinds' is not defined\n[the kernel was restarted: variables and imports are gone]",
      },
    ]);
    expect(conversation.instruction).toBe('Find the outliers.');
    expect(conversation.entries).toEqual([{ name: 'a.csv', size: '1.0KB' }]);
    expect(conversation.steps.map((step) => [step.stage, step.errorName, step.stateLost])).toEqual([
      ['setup', null, false],
      ['load', 'KeyError', false],
      ['overview', 'NameError', true],
    ]);
    expect(conversation.finishRequested).toBe(false);
  });

  it('accepts a chat profile: a system prompt first, results as user messages in <Execute>', () => {
    const conversation = readConversation([
      { role: 'system', content: 'You analyse data. Use <Analyze> and <Code>.' },
      { role: 'user', content: first },
      { role: 'assistant', content: cell('setup') },
      { role: 'user', content: '<Execute>\nHelpers ready.\n</Execute>' },
    ]);
    expect(conversation.instruction).toBe('Find the outliers.');
    expect(conversation.steps).toHaveLength(1);
    expect(conversation.steps[0]?.executeText).toBe('Helpers ready.');
  });

  it('takes any further message after a result as a request to finish', () => {
    const conversation = readConversation([
      { role: 'user', content: first },
      { role: 'assistant', content: cell('setup') },
      { role: 'execute', content: 'Helpers ready.' },
      { role: 'user', content: 'The context is nearly full. Write your final <Answer> now.' },
    ]);
    expect(conversation.finishRequested).toBe(true);
  });

  it('notes a cell that got no result and turns it did not write', () => {
    const conversation = readConversation([
      { role: 'user', content: first },
      { role: 'assistant', content: '<Analyze>something else</Analyze><Code>print(2)</Code>' },
      { role: 'assistant', content: cell('setup') },
    ]);
    expect(conversation.steps.map((step) => [step.stage, step.executeText])).toEqual([
      [null, null],
      ['setup', null],
    ]);
  });
});
