import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Docker from 'dockerode';
import { afterEach, expect, it } from 'vitest';
import { streamAnalysis } from '../../src/agent/analyze.ts';
import type { AnalysisResult } from '../../src/agent/events.ts';
import { createOpenAIChatModel } from '../../src/agent/openai-chat-model.ts';
import { containerLabels } from '../../src/sandbox/index.ts';
import { startFakeOpenAIServer } from '../support/fake-openai-server.ts';
import { cleanUpHarness, makeWorkspace } from './support/loop-harness.ts';

afterEach(cleanUpHarness);

/** Containers of this process's sessions, running or not. */
async function ownContainers(): Promise<Docker.ContainerInfo[]> {
  return new Docker().listContainers({
    all: true,
    filters: { label: [`${containerLabels.ownerPid}=${process.pid}`] },
  });
}

it('cancelling mid-cell interrupts the cell, ends the run as cancelled and leaves no container', async () => {
  const server = await startFakeOpenAIServer({
    script: [{ type: 'text', text: '<Code>\n```python\nimport time\ntime.sleep(120)\n```\n</Code>' }],
  });
  const runsDir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-cancel-'));
  const controller = new AbortController();
  let sawContainer = false;
  let result: AnalysisResult | undefined;
  try {
    for await (const event of streamAnalysis({
      instruction: 'Sleep.',
      workspaceDir: await makeWorkspace(),
      model: createOpenAIChatModel({ baseUrl: server.baseUrl, model: 'm' }),
      outDir: path.join(runsDir, 'run'),
      signal: controller.signal,
    })) {
      if (event.type === 'execution-start') {
        sawContainer = (await ownContainers()).length > 0;
        setTimeout(() => controller.abort(), 1000);
      }
      if (event.type === 'run-end') result = event.result;
    }
    expect(result?.termination).toEqual({ reason: 'cancelled', detail: expect.any(String) });
    expect(sawContainer).toBe(true);
    expect(await ownContainers()).toEqual([]);
  } finally {
    await server.close();
    await rm(runsDir, { recursive: true, force: true });
  }
});
