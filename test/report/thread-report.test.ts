import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createOpenAIChatModel } from '../../src/agent/openai-chat-model.ts';
import { openThread, resumeThread } from '../../src/agent/thread/index.ts';
import { renderRunFolder } from '../../src/report/render-report.ts';
import { notebookSchema } from '../../src/report/notebook-schema.ts';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../support/fake-openai-server.ts';
import { createFakeSandbox, printed } from '../agent/support/fake-session.ts';
import { cleanUpHarness, makeRunsDir, makeWorkspace } from '../agent/support/loop-harness.ts';

const servers: FakeOpenAIServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
  await cleanUpHarness();
});

/**
 * A thread in a fresh run folder whose model replies `replies` in order (the fake OpenAI server, closed after
 * the test) and whose cells print what `printedBy` gives for their code.
 */
async function scriptedThread(replies: readonly string[], printedBy: (code: string) => string) {
  const server = await startFakeOpenAIServer({
    script: replies.map((reply) => ({ type: 'text' as const, text: reply })),
  });
  servers.push(server);
  const runDir = path.join(await makeRunsDir(), 'run');
  const model = createOpenAIChatModel({ baseUrl: server.baseUrl, model: 'fake-model' });
  const createSandbox = createFakeSandbox({ run: (code) => printed(printedBy(code)) }).factory;
  const thread = await openThread({
    workspaceDir: await makeWorkspace(),
    model,
    createSandbox,
    outDir: runDir,
  });
  return { thread, runDir, model, createSandbox };
}

describe('the report of a thread', () => {
  it('holds every question with its answer and its process, after any turn', async () => {
    const { thread, runDir } = await scriptedThread(
      [
        '<Code>\nprint(10 + 20)\n</Code>',
        '<Answer>The total is 30.</Answer>',
        '<Ask>Which <b>year</b>?</Ask>',
        '<Code>\nprint(7)\n</Code>',
        '<Answer>In 2024 it is 7.</Answer>',
      ],
      (code) => (code.includes('10') ? '30\n' : '7\n'),
    );
    await thread.ask('What is the total?').result;

    // Rendered after the first turn, while the thread is open.
    await renderRunFolder(runDir, { formats: ['md'] });
    const afterOne = await readFile(path.join(runDir, 'report.md'), 'utf8');
    expect(afterOne).toContain('## Answer');
    expect(afterOne).toContain('The total is 30.');
    expect(afterOne).not.toMatch(/Incomplete trace/);

    await thread.ask('And for one year?').result;
    await thread.ask('2024').result;
    await thread.close();
    await renderRunFolder(runDir, { formats: ['html', 'md', 'ipynb'] });

    const html = await readFile(path.join(runDir, 'report.html'), 'utf8');
    expect(html).toContain('<h2>Conversation</h2>');
    for (const question of ['What is the total?', 'And for one year?', '2024'])
      expect(html).toContain(question);
    expect(html).toContain('Which &lt;b&gt;year&lt;/b&gt;?');
    expect(html).not.toContain('<b>year</b>');
    expect(html).toContain('id="turn-3"');
    expect(html).toMatch(/num-verified[^>]*>30/);

    const markdown = await readFile(path.join(runDir, 'report.md'), 'utf8');
    expect(markdown).toContain('### Question 1');
    expect(markdown).toContain('### Reply 3');
    expect(markdown).toContain('In 2024 it is 7.');

    const notebook = notebookSchema.parse(
      JSON.parse(await readFile(path.join(runDir, 'analysis.ipynb'), 'utf8')),
    );
    const sources = notebook.cells.map((cell) =>
      Array.isArray(cell.source) ? cell.source.join('') : cell.source,
    );
    const order = ['## Question 1', 'print(10 + 20)', '## Question 2', '## Reply 3', 'print(7)'].map(
      (needle) => sources.findIndex((source) => source.includes(needle)),
    );
    expect(order.every((index) => index >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });

  it("counts the numbers of every answer of a conversation, not only the last one's", async () => {
    const { thread, runDir } = await scriptedThread(
      [
        '<Code>\nprint(10 + 20)\n</Code>',
        '<Answer>The total is 30.</Answer>',
        '<Code>\nprint(12, 18)\n</Code>',
        '<Answer>North has 12 and South 18.</Answer>',
      ],
      (code) => (code.includes('10') ? '30\n' : '12 18\n'),
    );
    await thread.ask('What is the total?').result;
    const afterOne = await renderRunFolder(runDir, { formats: ['md'] });
    expect(afterOne.conversation).toBeNull();
    await thread.ask('And per region?').result;
    await thread.close();
    const rendered = await renderRunFolder(runDir, { formats: ['md'] });
    expect(rendered.grounding).toEqual({ checked: 2, verified: 2, unverified: 0 });
    expect(rendered.conversation).toEqual({
      answers: 2,
      grounding: { checked: 3, verified: 3, unverified: 0 },
    });
  });
});

/** Heading levels of report.md in order, with their text (fenced code left out). */
function markdownOutline(markdown: string): { level: number; text: string }[] {
  const outline: { level: number; text: string }[] = [];
  let fence: string | null = null;
  for (const line of markdown.split('\n')) {
    const marker = /^(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker !== undefined && (fence === null || line.trim() === fence)) {
      fence = fence === null ? marker : null;
      continue;
    }
    const heading = fence === null ? /^(#{1,6}) (.*)$/.exec(line) : null;
    if (heading) outline.push({ level: heading[1]?.length ?? 0, text: heading[2] ?? '' });
  }
  return outline;
}

function htmlOutline(html: string): { level: number; text: string }[] {
  return Array.from(html.matchAll(/<h([1-6])\b[^>]*>(.*?)<\/h\1>/gs), (match) => ({
    level: Number(match[1]),
    text: (match[2] ?? '').replace(/<[^>]+>/g, ''),
  }));
}

/** Never more than one level deeper than the heading before; every question heading of one kind at one level. */
function expectNestedOutline(outline: readonly { level: number; text: string }[]): void {
  for (const [index, heading] of outline.entries()) {
    const before = outline[index - 1];
    if (before !== undefined && heading.level > before.level + 1)
      throw new Error(`"${heading.text}" (h${heading.level}) after "${before.text}" (h${before.level})`);
  }
  const questionLevels = (pattern: RegExp) =>
    new Set(outline.filter((heading) => pattern.test(heading.text)).map((heading) => heading.level));
  expect(questionLevels(/^Question \d+$/).size).toBe(1);
  expect(questionLevels(/^Question \d+: /).size).toBe(1);
}

describe('the outline of a resumed conversation', () => {
  it("puts the replay notice under the question it serves, and the answers' headings under their question (h2 inside h3, ### then #####)", async () => {
    const { thread, runDir, model, createSandbox } = await scriptedThread(
      [
        '<Code>\nprint(10 + 20)\n</Code>',
        '<Answer>## The data\n\nThe total is 30.\n\n#### Detail\n\nMore.\n\n## How to read this\n\nA note.</Answer>',
        '<Code>\nprint(45)\n</Code>',
        '<Answer># By region\n\nNorth has 45.</Answer>',
      ],
      (code) => (code.includes('10') ? '30\n' : '45\n'),
    );
    await thread.ask('What is the total?').result;
    await thread.close();
    const resumed = await resumeThread(runDir, { model, createSandbox });
    await resumed.ask('And per region?').result;
    await resumed.close();
    await renderRunFolder(runDir, { formats: ['html', 'md'] });

    const markdown = await readFile(path.join(runDir, 'report.md'), 'utf8');
    const mdOutline = markdownOutline(markdown);
    expectNestedOutline(mdOutline);
    const mdTexts = mdOutline.map((heading) => heading.text);
    const replay = mdTexts.findIndex((text) => /Notice \(replay\)/.test(text));
    expect(replay).toBeGreaterThan(mdTexts.indexOf('Question 2: And per region?'));
    expect(mdOutline.find((heading) => heading.text === 'The data')?.level).toBe(4);
    expect(mdOutline.find((heading) => heading.text === 'By region')?.level).toBe(4);

    const html = await readFile(path.join(runDir, 'report.html'), 'utf8');
    const outline = htmlOutline(html);
    expectNestedOutline(outline);
    const question1 = outline.findIndex((heading) => heading.text === 'Question 1');
    expect(outline[question1]?.level).toBe(3);
    expect(
      outline.slice(question1 + 1, question1 + 4).map((heading) => [heading.level, heading.text]),
    ).toEqual([
      [4, 'The data'],
      [5, 'Detail'],
      [4, 'How to read this'],
    ]);
    const turn2 = html.indexOf('id="turn-2"');
    const notice = html.indexOf('<span class="kind">replay</span>');
    expect(turn2).toBeGreaterThan(0);
    expect(notice).toBeGreaterThan(turn2);
    expect(html.indexOf('id="round-', turn2)).toBeGreaterThan(notice);
  });
});

describe('the provenance of a conversation', () => {
  it("gives the duration over every session and the last question's ending, and says an open conversation is open (it gave the last session's 2.4 s, 'Termination: answered' and 'none recorded' / 'unknown')", async () => {
    const { thread, runDir, model, createSandbox } = await scriptedThread(
      [
        '<Code>\nprint(10 + 20)\n</Code>',
        '<Answer>The total is 30.</Answer>',
        '<Code>\nprint(45)\n</Code>',
        '<Answer>North has 45.</Answer>',
      ],
      (code) => (code.includes('10') ? '30\n' : '45\n'),
    );
    await thread.ask('What is the total?').result;
    const provenance = async () => {
      await renderRunFolder(runDir, { formats: ['md', 'html'] });
      const markdown = await readFile(path.join(runDir, 'report.md'), 'utf8');
      const html = await readFile(path.join(runDir, 'report.html'), 'utf8');
      return { markdown: markdown.slice(markdown.indexOf('## Provenance')), html };
    };

    // Between questions, before close(): open, not crashed.
    const open = await provenance();
    expect(open.markdown).toMatch(/- \*\*Last question:\*\* answered.*The conversation is still open/);
    expect(open.markdown).toMatch(
      /- \*\*Duration:\*\* no session has ended yet, and the current one is still open;/,
    );
    expect(open.markdown).toContain('ended not yet: the conversation is still open');
    expect(open.markdown).not.toMatch(/none recorded|unknown/);
    expect(open.html).toContain('<dt>Last question</dt>');

    await thread.close();
    const resumed = await resumeThread(runDir, { model, createSandbox });
    await resumed.ask('And per region?').result;
    await resumed.close();
    const closed = await provenance();
    expect(closed.markdown).toMatch(/- \*\*Last question:\*\* answered in round \d+\./);
    expect(closed.markdown).not.toContain('Termination');
    expect(closed.markdown).toMatch(
      /- \*\*Duration:\*\* [\d.]+ m?s over 2 sessions \(each from its start to its close\); cells .*, all questions/,
    );
    expect(closed.markdown).toMatch(/- \*\*Rounds:\*\* 4 over 2 questions \(at most \d+ per question\)/);
    expect(closed.html).toMatch(/<dt>Duration<\/dt><dd>[^<]* over 2 sessions/);
    expect(closed.html).toMatch(/<dt>Last question<\/dt><dd>answered in round \d+\.<\/dd>/);
  });
});
