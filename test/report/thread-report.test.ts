import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createOpenAIChatModel } from '../../src/agent/openai-chat-model.ts';
import { openThread } from '../../src/agent/thread/index.ts';
import { renderRunFolder } from '../../src/report/render-report.ts';
import { notebookSchema } from '../../src/report/notebook-schema.ts';
import { startFakeOpenAIServer } from '../support/fake-openai-server.ts';
import { createFakeSandbox, printed } from '../agent/support/fake-session.ts';
import { cleanUpHarness, makeRunsDir, makeWorkspace } from '../agent/support/loop-harness.ts';

afterEach(cleanUpHarness);

const text = (value: string) => ({ type: 'text' as const, text: value });

describe('the report of a thread', () => {
  it('holds every question with its answer and its process, after any turn', async () => {
    const server = await startFakeOpenAIServer({
      script: [
        text('<Code>\nprint(10 + 20)\n</Code>'),
        text('<Answer>The total is 30.</Answer>'),
        text('<Ask>Which <b>year</b>?</Ask>'),
        text('<Code>\nprint(7)\n</Code>'),
        text('<Answer>In 2024 it is 7.</Answer>'),
      ],
    });
    try {
      const runDir = path.join(await makeRunsDir(), 'run');
      const thread = await openThread({
        workspaceDir: await makeWorkspace(),
        model: createOpenAIChatModel({ baseUrl: server.baseUrl, model: 'fake-model' }),
        createSandbox: createFakeSandbox({ run: (code) => printed(code.includes('10') ? '30\n' : '7\n') })
          .factory,
        outDir: runDir,
      });
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
    } finally {
      await server.close();
    }
  });

  it("counts the numbers of every answer of a conversation, not only the last one's", async () => {
    const server = await startFakeOpenAIServer({
      script: [
        text('<Code>\nprint(10 + 20)\n</Code>'),
        text('<Answer>The total is 30.</Answer>'),
        text('<Code>\nprint(12, 18)\n</Code>'),
        text('<Answer>North has 12 and South 18.</Answer>'),
      ],
    });
    try {
      const runDir = path.join(await makeRunsDir(), 'run');
      const thread = await openThread({
        workspaceDir: await makeWorkspace(),
        model: createOpenAIChatModel({ baseUrl: server.baseUrl, model: 'fake-model' }),
        createSandbox: createFakeSandbox({ run: (code) => printed(code.includes('10') ? '30\n' : '12 18\n') })
          .factory,
        outDir: runDir,
      });
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
    } finally {
      await server.close();
    }
  });
});
