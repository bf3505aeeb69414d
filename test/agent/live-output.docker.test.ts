import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/agent/events.ts';
import { createOpenAIChatModel } from '../../src/agent/openai-chat-model.ts';
import { openThread } from '../../src/agent/thread/index.ts';
import { renderRunFolder } from '../../src/report/index.ts';
import { readTrace } from '../../src/trace/reader.ts';
import { startFakeOpenAIServer } from '../support/fake-openai-server.ts';
import { useTempDirs } from '../support/temp-dirs.ts';

/** What a running cell prints reaches the caller as it comes, and a cancelled cell keeps it. */

const tempDirs = useTempDirs();

const code = (text: string) => ({ type: 'text' as const, text: `<Code>\n${text}\n</Code>` });

describe('live cell output through the real sandbox', () => {
  it('a cell printing every 100 ms for 2 s yields at least 5 execution-output events before its execution-end', async () => {
    const server = await startFakeOpenAIServer({
      script: [
        code('import time\nfor i in range(20):\n    print(f"tick {i}", flush=True)\n    time.sleep(0.1)'),
        { type: 'text', text: '<Answer>Done.</Answer>' },
      ],
    });
    try {
      const workspaceDir = await tempDirs.make('datalyst-live-ws-');
      await writeFile(path.join(workspaceDir, 'a.csv'), 'x\n1\n');
      const thread = await openThread({
        workspaceDir,
        outDir: path.join(await tempDirs.make('datalyst-live-runs-'), 'run'),
        model: createOpenAIChatModel({ baseUrl: server.baseUrl, model: 'fake-model' }),
      });
      const events: AgentEvent[] = [];
      for await (const event of thread.ask('Count.')) events.push(event);
      await thread.close();
      const end = events.findIndex((event) => event.type === 'execution-end');
      const live = events.slice(0, end).filter((event) => event.type === 'execution-output');
      expect(live.length).toBeGreaterThanOrEqual(5);
      const streamed = live.map((event) => (event.type === 'execution-output' ? event.text : '')).join('');
      expect(streamed).toContain('tick 0\n');
      expect(streamed).toContain('tick 19\n');
    } finally {
      await server.close();
    }
  });

  it('a cancelled cell keeps what it printed in the trace and the report, and the thread goes on', async () => {
    const server = await startFakeOpenAIServer({
      script: [
        code('import time\nfor i in range(600):\n    print(f"line {i}", flush=True)\n    time.sleep(0.1)'),
        code('print("after")'),
        { type: 'text', text: '<Answer>Still here.</Answer>' },
      ],
    });
    try {
      const workspaceDir = await tempDirs.make('datalyst-live-ws-');
      await writeFile(path.join(workspaceDir, 'a.csv'), 'x\n1\n');
      const outDir = path.join(await tempDirs.make('datalyst-live-runs-'), 'run');
      const thread = await openThread({
        workspaceDir,
        outDir,
        model: createOpenAIChatModel({ baseUrl: server.baseUrl, model: 'fake-model' }),
      });
      const controller = new AbortController();
      let outputs = 0;
      for await (const event of thread.ask('Go.', { signal: controller.signal })) {
        if (event.type === 'execution-output' && ++outputs === 3) controller.abort();
      }
      const second = await thread.ask('Again.').result;
      expect(second.answer).toBe('Still here.');
      await thread.close();

      const trace = await readTrace(path.join(outDir, 'trace.jsonl'));
      const cancelled = trace.records.find(
        (record) => record.type === 'execution' && record.outputId === 'E1',
      );
      expect(cancelled?.type === 'execution' ? cancelled.result.status : null).toBe('cancelled');
      const kept = cancelled?.type === 'execution' ? cancelled.result.stdout.text : '';
      expect(kept).toMatch(/^line 0\nline 1\n/);
      await renderRunFolder(outDir, { formats: ['md'] });
      const markdown = await readFile(path.join(outDir, 'report.md'), 'utf8');
      expect(markdown).toContain('E1 (cancelled');
      expect(markdown).toContain('line 1');
      expect(markdown).not.toMatch(/Code \(not executed\)/);
    } finally {
      await server.close();
    }
  });
});
