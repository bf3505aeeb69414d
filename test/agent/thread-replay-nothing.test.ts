import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/agent/events.ts';
import { createOpenAIChatModel } from '../../src/agent/openai-chat-model.ts';
import { openThread } from '../../src/agent/thread/index.ts';
import { startFakeOpenAIServer } from '../support/fake-openai-server.ts';
import { createFakeSandbox, printed, slowCell } from './support/fake-session.ts';
import { cleanUpHarness, makeRunsDir, makeWorkspace } from './support/loop-harness.ts';

/**
 * A thread whose sandbox is gone after a turn whose only cell was cancelled:
 * the fresh session runs no cell again. The model was told "the 0 earlier
 * cells were run again in order, so the variables are back".
 */

afterEach(cleanUpHarness);

describe('a replay with no cell to run again', () => {
  it('says no earlier cell was run again, and never that the variables are back', async () => {
    const controller = new AbortController();
    const server = await startFakeOpenAIServer({
      script: [
        { type: 'text', text: '<Analyze>Next.</Analyze>\n<Code>\n```python\nlong()\n```\n</Code>' },
        { type: 'text', text: '<Answer>after</Answer>' },
      ],
    });
    const sandbox = createFakeSandbox({
      run: async (code, _index, signal) => {
        if (code !== 'long()') return printed('x\n');
        setTimeout(() => controller.abort(), 20);
        return slowCell(10_000, signal);
      },
    });
    try {
      const thread = await openThread({
        workspaceDir: await makeWorkspace(),
        model: createOpenAIChatModel({
          baseUrl: server.baseUrl,
          model: 'fake-model',
          retry: { maxRetries: 0, initialDelayMs: 5, maxDelayMs: 5 },
        }),
        createSandbox: sandbox.factory,
        outDir: path.join(await makeRunsDir(), 'run'),
      });
      const first = await thread.ask('slow', { signal: controller.signal }).result;
      expect(first.termination.reason).toBe('cancelled');
      await thread.releaseSandbox();
      const events: AgentEvent[] = [];
      for await (const event of thread.ask('again')) events.push(event);
      expect(events.find((event) => event.type === 'replay-end')).toMatchObject({
        summary: { cells: 1, replayed: 0, skipped: [{ outputId: 'E1' }] },
      });
      expect(sandbox.sessions[1]?.executed).toEqual([]);
      const notice = events.find((event) => event.type === 'notice' && event.kind === 'replay');
      expect(notice).toMatchObject({
        text: 'The sandbox was started again; no recorded cell needed running again. Not replayed: E1 (it ended cancelled in the record).',
      });
      const told = JSON.stringify(server.completionRequests[1]?.body?.messages ?? []);
      expect(told).toContain(
        'The sandbox was restarted and no earlier cell was run again, so the kernel holds no variables from earlier cells. Not run again: E1 (it ended cancelled in the record).',
      );
      expect(told).not.toMatch(/0 earlier cells|variables are back/);
      await thread.close();
    } finally {
      await server.close();
    }
  });
});
