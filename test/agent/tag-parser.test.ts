import { describe, expect, it } from 'vitest';
import {
  createTagParser,
  parseSteps,
  type ParsedStep,
  type ParserEvent,
} from '../../src/agent/tag-parser.ts';
import { stripCodeFence } from '../../src/agent/code-fence.ts';
import { loadStudentLoanTrajectory } from './support/student-loan.ts';

function stepsOf(events: readonly ParserEvent[]): ParsedStep[] {
  return events.flatMap((event) => (event.type === 'step-end' ? [event.step] : []));
}

/** Feeds `text` in chunks of `size` characters. */
function parseChunked(text: string, size: number): ParserEvent[] {
  const parser = createTagParser();
  const events: ParserEvent[] = [];
  for (let index = 0; index < text.length; index += size)
    events.push(...parser.push(text.slice(index, index + size)));
  events.push(...parser.end());
  return events;
}

function summary(steps: readonly ParsedStep[]): string[] {
  return steps.map((step) => `${step.kind}${step.closed ? '' : '(open)'}: ${step.text}`);
}

describe('tag parser', () => {
  it('splits a reply into its steps', () => {
    const steps = parseSteps('<Analyze>Look at the data.</Analyze>\n<Code>\nprint(1)\n</Code>');
    expect(summary(steps)).toEqual(['analyze: Look at the data.', 'code: print(1)']);
  });

  it('gives the same steps whatever the chunk size, including tags split across chunks', () => {
    const reply =
      'Intro prose.\n<Analyze>Plan</Analyze>\n<Understand>Seen</Understand>\n<Code>\n```python\nx = 1 < 2\nprint(x)\n```\n</Code>';
    const whole = parseSteps(reply);
    for (const size of [1, 2, 3, 5, 7, 13]) {
      expect(summary(stepsOf(parseChunked(reply, size)))).toEqual(summary(whole));
    }
    expect(summary(whole)).toEqual([
      'text: Intro prose.',
      'analyze: Plan',
      'understand: Seen',
      'code: x = 1 < 2\nprint(x)',
    ]);
  });

  it('streams text deltas labelled with their tag, never the tags themselves', () => {
    const events = parseChunked('<Analyze>ab</Ana' + 'lyze><Code>print(2)</Code>', 4);
    const deltas = events.flatMap((event) =>
      event.type === 'text-delta' ? [`${event.kind}:${event.text}`] : [],
    );
    expect(deltas.join('|')).not.toContain('<');
    const byKind = new Map<string, string>();
    for (const event of events) {
      if (event.type === 'text-delta') byKind.set(event.kind, (byKind.get(event.kind) ?? '') + event.text);
    }
    expect(Object.fromEntries(byKind)).toEqual({ analyze: 'ab', code: 'print(2)' });
  });

  it('keeps an unclosed tag at the end of the stream as a step with closed=false', () => {
    const steps = parseSteps('<Analyze>Plan</Analyze><Code>\n```python\nimport pandas as pd\ndf = pd.read_');
    expect(steps.at(-1)).toMatchObject({ kind: 'code', closed: false, fenceOpen: true });
    expect(steps.at(-1)?.text).toBe('import pandas as pd\ndf = pd.read_');
  });

  it('keeps a partial tag at the end of the stream as text', () => {
    const steps = parseSteps('<Answer>The mean is 4.</Ans');
    expect(steps).toEqual([
      {
        kind: 'answer',
        text: 'The mean is 4.</Ans',
        raw: 'The mean is 4.</Ans',
        closed: false,
        fenceOpen: false,
      },
    ]);
  });

  it('returns several Code blocks of one reply in order', () => {
    const steps = parseSteps('<Code>a = 1</Code>\n<Analyze>then</Analyze>\n<Code>b = a + 1</Code>');
    expect(steps.filter((step) => step.kind === 'code').map((step) => step.text)).toEqual([
      'a = 1',
      'b = a + 1',
    ]);
  });

  it('strips markdown fences with or without a language', () => {
    expect(parseSteps('<Code>\n```python\nprint(1)\n```\n</Code>')[0]?.text).toBe('print(1)');
    expect(parseSteps('<Code>\n```\nprint(2)\n```\n</Code>')[0]?.text).toBe('print(2)');
    expect(parseSteps('<Code>\n```py\nprint(3)\n```\n</Code>')[0]?.text).toBe('print(3)');
    expect(parseSteps('<Code>print(4)</Code>')[0]?.text).toBe('print(4)');
  });

  it('keeps prose before the first tag as a text step', () => {
    const steps = parseSteps('Sure, let me look.\n\n<Code>print(1)</Code>');
    expect(summary(steps)).toEqual(['text: Sure, let me look.', 'code: print(1)']);
  });

  it('treats </Code> inside a fenced code string as code, not as the end of the block', () => {
    const reply = '<Code>\n```python\nprint("</Code>")\nprint("<Answer>")\n```\n</Code>';
    const steps = parseSteps(reply);
    expect(steps).toHaveLength(1);
    expect(steps[0]).toMatchObject({ kind: 'code', closed: true, fenceOpen: false });
    expect(steps[0]?.text).toBe('print("</Code>")\nprint("<Answer>")');
    for (const size of [1, 4, 9]) expect(stepsOf(parseChunked(reply, size))).toEqual(steps);
  });

  it('ends unfenced code at the first </Code> (there is no fence to tell a string from the end)', () => {
    const steps = parseSteps('<Code>print("</Code>")</Code>');
    expect(summary(steps)).toEqual(['code: print("', 'text: ")</Code>']);
  });

  it('reads other tags inside code as code', () => {
    const steps = parseSteps('<Code>s = "<Analyze>"\nprint(s)</Code>');
    expect(summary(steps)).toEqual(['code: s = "<Analyze>"\nprint(s)']);
  });

  it('accepts tags in the wrong case', () => {
    const steps = parseSteps('<analyze>plan</ANALYZE><code>print(1)</code><ANSWER>done</answer>');
    expect(summary(steps)).toEqual(['analyze: plan', 'code: print(1)', 'answer: done']);
  });

  it('returns a reply with neither Code nor Answer as its reasoning steps', () => {
    const steps = parseSteps('<Analyze>I should think more.</Analyze>');
    expect(summary(steps)).toEqual(['analyze: I should think more.']);
    expect(parseSteps('Just prose, no tags.')).toMatchObject([
      { kind: 'text', text: 'Just prose, no tags.' },
    ]);
    expect(parseSteps('  \n ')).toEqual([]);
  });

  it('closes a step whose closing tag the model forgot when the next one opens', () => {
    const steps = parseSteps('<Analyze>plan\n<Code>print(1)</Code>');
    expect(summary(steps)).toEqual(['analyze(open): plan', 'code: print(1)']);
  });

  it('reports <Execute> written by the model as an execute step', () => {
    const steps = parseSteps('<Code>print(1)</Code>\n<Execute>\n1\n</Execute>\n<Answer>1</Answer>');
    expect(summary(steps)).toEqual(['code: print(1)', 'execute: 1', 'answer: 1']);
  });

  it('reports where each opening tag starts in the text pushed, whatever the chunk size', () => {
    const reply =
      'Prose <b>x</b> <Analyze>a</Analyze><Code>\n```python\nprint("<Execute>")\n```\n</Code>\n<Execute>\nmade up <execute> again';
    const expected = [
      { kind: 'analyze', tagOffset: reply.indexOf('<Analyze>') },
      { kind: 'code', tagOffset: reply.indexOf('<Code>') },
      { kind: 'execute', tagOffset: reply.indexOf('<Execute>\nmade') },
    ];
    for (const size of [1, 2, 3, 5, 7, 13, reply.length]) {
      const starts = parseChunked(reply, size).flatMap((event) =>
        event.type === 'step-start' && event.tagOffset !== undefined
          ? [{ kind: event.kind, tagOffset: event.tagOffset }]
          : [],
      );
      expect(starts.slice(0, 3)).toEqual(expected);
    }
  });

  it('keeps a < that starts no tag as text', () => {
    const steps = parseSteps('a <b> c < d <Cod <Analyze>x < y</Analyze>');
    expect(summary(steps)).toEqual(['text: a <b> c < d <Cod', 'analyze: x < y']);
  });

  it('parses the DeepAnalyze student-loan transcript into exactly its steps', () => {
    const trajectory = loadStudentLoanTrajectory();
    const expectedKinds = [
      'analyze',
      'code',
      'execute',
      ...Array.from({ length: 6 }, () => ['understand', 'analyze', 'code', 'execute']).flat(),
      'answer',
    ];
    const steps = parseSteps(trajectory.transcript);
    expect(steps.map((step) => step.kind)).toEqual(expectedKinds);
    expect(steps.every((step) => step.closed)).toBe(true);
    expect(steps.filter((step) => step.kind === 'execute').map((step) => step.raw)).toEqual(
      trajectory.executeOutputs,
    );
    expect(steps.at(-1)?.text.startsWith('# Comprehensive Analysis of Student Enrollment Patterns')).toBe(
      true,
    );

    const codes = steps.filter((step) => step.kind === 'code');
    expect(codes).toHaveLength(7);
    for (const code of codes) {
      expect(code.text).not.toContain('```');
      expect(code.text.startsWith('import pandas as pd')).toBe(true);
    }
    // Chunked like a stream, turn by turn, the same steps come out.
    const streamed = trajectory.modelTurns.flatMap((turn) => stepsOf(parseChunked(turn, 17)));
    expect(streamed).toEqual(steps.filter((step) => step.kind !== 'execute'));
  });
});

describe('stripCodeFence', () => {
  it('joins the Python blocks and leaves prose and other languages out', () => {
    const raw = 'Here:\n```python\na = 1\n```\nand\n```bash\nls\n```\n```\nb = 2\n```';
    expect(stripCodeFence(raw)).toBe('a = 1\n\nb = 2');
  });

  it('runs an unclosed fence to the end', () => {
    expect(stripCodeFence('```python\nx = 1\ny = 2')).toBe('x = 1\ny = 2');
  });

  it('removes common indentation but keeps the structure', () => {
    expect(stripCodeFence('    if x:\n        y()\n')).toBe('if x:\n    y()');
  });
});
