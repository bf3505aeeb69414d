import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/agent/events.ts';
import { createOpenAIChatModel } from '../../src/agent/openai-chat-model.ts';
import { openThread } from '../../src/agent/thread/index.ts';
import { readTrace } from '../../src/trace/reader.ts';
import { startFakeOpenAIServer } from '../support/fake-openai-server.ts';
import { createFakeSandbox } from './support/fake-session.ts';
import { cleanUpHarness, makeRunsDir, makeWorkspace } from './support/loop-harness.ts';
import { descriptorsOn } from '../support/open-descriptors.ts';

/**
 * A thread whose turn a bug in Datalyst ended: close() writes no run-end (no
 * termination is true) and closes trace.jsonl as written. It called
 * discardIfEmpty(), which does nothing once a record exists, so the
 * descriptor stayed open until the process ended.
 */

afterEach(cleanUpHarness);

describe('a thread stopped by a bug in Datalyst', () => {
  it.runIf(process.platform === 'linux')(
    'close() leaves trace.jsonl closed and kept as written, with no run-end',
    async () => {
      const server = await startFakeOpenAIServer({
        script: [{ type: 'text', text: "<Code>print('x')</Code>" }],
      });
      // A session's errors are DatalystErrors; a TypeError out of it is Datalyst's own bug.
      const sandbox = createFakeSandbox({
        failOnCell: {
          index: 0,
          error: new TypeError("Cannot read properties of undefined (reading 'text')"),
        },
      });
      const runDir = path.join(await makeRunsDir(), 'run');
      try {
        const thread = await openThread({
          workspaceDir: await makeWorkspace(),
          model: createOpenAIChatModel({
            baseUrl: server.baseUrl,
            model: 'fake-model',
            retry: { maxRetries: 0, initialDelayMs: 5, maxDelayMs: 5 },
          }),
          createSandbox: sandbox.factory,
          outDir: runDir,
        });
        const turn = thread.ask('What is in the data?');
        const events: AgentEvent[] = [];
        await expect(
          (async () => {
            for await (const event of turn) events.push(event);
          })(),
        ).rejects.toMatchObject({ code: 'INTERNAL_ERROR' });
        const tracePath = path.join(runDir, 'trace.jsonl');
        const written = await readFile(tracePath);
        await thread.close();
        expect(descriptorsOn(tracePath)).toBe(0);
        // The partial trace stays, byte for byte: what a crash leaves, which readers handle.
        expect(await readFile(tracePath)).toEqual(written);
        const trace = await readTrace(tracePath);
        expect(trace.partial).toBe(true);
        expect(trace.records.map((record) => record.type)).toContain('turn-start');
        expect(trace.records.map((record) => record.type)).not.toContain('run-end');
        expect(sandbox.sessions[0]?.closed).toBe(true);
      } finally {
        await server.close();
      }
    },
  );
});
