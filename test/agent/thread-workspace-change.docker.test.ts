import { createHash } from 'node:crypto';
import { copyFile, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/agent/events.ts';
import { createOpenAIChatModel } from '../../src/agent/openai-chat-model.ts';
import { openThread } from '../../src/agent/thread/index.ts';
import { readTrace } from '../../src/trace/reader.ts';
import { startFakeOpenAIServer } from '../support/fake-openai-server.ts';
import { useTempDirs } from '../support/temp-dirs.ts';

/**
 * Regression (a thread that began without files never analysed anything):
 * its first question ended no-data, and a file put into its workspace
 * afterwards was never seen. Through the real sandbox: the file is profiled
 * in the fresh session after the release, the model is told before the
 * question, its cell reads the file, and the trace records it with SHA-256.
 */

const personCsv = path.resolve('workspace-examples/student-loan/person.csv');
const tempDirs = useTempDirs();

describe('a thread that began without files, through the real sandbox', () => {
  it('analyses a CSV added to its workspace after the sandbox is released; the trace and the model are told', async () => {
    const server = await startFakeOpenAIServer({
      script: [
        {
          type: 'text',
          text: "<Analyze>Read it.</Analyze>\n<Code>\nimport pandas as pd\npeople = pd.read_csv('person.csv')\nprint(len(people))\n</Code>",
        },
        { type: 'text', text: '<Answer>person.csv holds 1000 people.</Answer>' },
      ],
    });
    try {
      const workspaceDir = await tempDirs.make('datalyst-thread-empty-ws-');
      const outDir = path.join(await tempDirs.make('datalyst-thread-empty-runs-'), 'run');
      const thread = await openThread({
        workspaceDir,
        outDir,
        model: createOpenAIChatModel({ baseUrl: server.baseUrl, model: 'fake-model' }),
      });
      const first = await thread.ask('Hello').result;
      expect(first.termination.reason).toBe('no-data');
      expect(server.completionRequests).toHaveLength(0);

      await copyFile(personCsv, path.join(workspaceDir, 'person.csv'));
      await thread.releaseSandbox();
      const events: AgentEvent[] = [];
      for await (const event of thread.ask('Describe the data')) events.push(event);
      await thread.close();

      const end = events.find((event) => event.type === 'turn-end');
      expect(end).toMatchObject({
        result: { termination: { reason: 'answered' }, answer: 'person.csv holds 1000 people.' },
      });
      const cell = events.find((event) => event.type === 'execution-end');
      expect(cell?.type === 'execution-end' && cell.result.stdout.text).toBe('1000\n');
      // The sandbox profiled the new file, and the model read its profile in the note before the question.
      const profiled = events.find((event) => event.type === 'profile-end');
      expect(profiled?.type === 'profile-end' && profiled.profile.files.map((file) => file.path)).toEqual([
        'person.csv',
      ]);
      const told = server.completionRequests[0]?.body?.messages?.at(-1)?.content ?? '';
      expect(told).toContain(
        'The workspace changed since the last question: 1 file was added ("person.csv").',
      );
      expect(told).toMatch(/Added file 1: \{"name":"person.csv",[^\n]*"rows":1000,[^\n]*"name":"name"/);
      expect(told).toMatch(/Describe the data$/);

      const { records } = await readTrace(path.join(outDir, 'trace.jsonl'));
      const bytes = await readFile(personCsv);
      expect(records.find((record) => record.type === 'workspace-change')).toEqual({
        type: 'workspace-change',
        at: expect.any(String),
        added: [
          {
            path: 'person.csv',
            sizeBytes: bytes.length,
            sha256: createHash('sha256').update(bytes).digest('hex'),
          },
        ],
        changed: [],
        removed: [],
      });
    } finally {
      await server.close();
    }
  });
});
