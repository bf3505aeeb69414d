import { copyFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AgentEvent, TurnResult } from '../../src/agent/events.ts';
import { createOfflineAnalyst } from '../../src/agent/offline-analyst/index.ts';
import { openThread } from '../../src/agent/thread/index.ts';
import type { Thread } from '../../src/agent/thread/index.ts';
import { useTempDirs } from '../support/temp-dirs.ts';

/**
 * Regressions, through the real sandbox: the offline analyst in a thread
 * whose workspace gained a file. A thread whose first question found no data
 * ended no-data for ever; a follow-up after a file came described only the
 * tables loaded before ("Describe the data" on orders.csv, after person.csv
 * was added, said nothing of person.csv).
 */

const examples = path.resolve(import.meta.dirname, '../../workspace-examples');
const tempDirs = useTempDirs();

async function emptyThread(): Promise<{ thread: Thread; workspaceDir: string }> {
  const workspaceDir = await tempDirs.make('datalyst-offline-change-ws-');
  const runs = await tempDirs.make('datalyst-offline-change-runs-');
  const thread = await openThread({
    workspaceDir,
    outDir: path.join(runs, 'thread'),
    model: createOfflineAnalyst(),
  });
  return { thread, workspaceDir };
}

async function ask(thread: Thread, question: string): Promise<{ result: TurnResult; outputs: string[] }> {
  const outputs: string[] = [];
  let result: TurnResult | null = null;
  for await (const event of thread.ask(question) as AsyncIterable<AgentEvent>) {
    if (event.type === 'execution-end')
      outputs.push(event.result.stdout.text + (event.result.error?.name ?? ''));
    if (event.type === 'turn-end') result = event.result;
  }
  if (result === null) throw new Error('no turn-end');
  return { result, outputs };
}

describe('the offline analyst after files came into a thread’s workspace', () => {
  it('a thread that began with no files analyses the file that came, as a first question would', async () => {
    const { thread, workspaceDir } = await emptyThread();
    try {
      const hello = await ask(thread, 'Hello');
      expect(hello.result.termination.reason).toBe('no-data');
      await copyFile(path.join(examples, 'sales/orders.csv'), path.join(workspaceDir, 'orders.csv'));
      await thread.releaseSandbox();
      const described = await ask(thread, 'Describe the data');
      expect(described.result.termination.reason).toBe('answered');
      // The whole plan: loaded, overview, distributions… not a follow-up's single cell.
      expect(described.outputs.length).toBeGreaterThan(4);
      expect(described.outputs.join('\n')).not.toMatch(/Traceback|Error$/m);
      expect(described.result.answer).toContain('orders.csv');
      expect(described.result.answer).toMatch(/revenue/);
    } finally {
      await thread.close();
    }
  });

  it('a follow-up after a file came loads it, and "Describe the data" covers both files', async () => {
    const { thread, workspaceDir } = await emptyThread();
    try {
      await copyFile(path.join(examples, 'sales/orders.csv'), path.join(workspaceDir, 'orders.csv'));
      expect((await ask(thread, 'Describe the data')).result.termination.reason).toBe('answered');
      await copyFile(path.join(examples, 'student-loan/person.csv'), path.join(workspaceDir, 'person.csv'));
      await thread.releaseSandbox();
      const followUp = await ask(thread, 'Describe the data');
      expect(followUp.result.termination.reason).toBe('answered');
      // Two cells: the new file loaded into the replayed kernel, then every table described.
      expect(followUp.outputs).toHaveLength(2);
      expect(followUp.outputs[0]).toContain('- `person.csv`: 1000 rows × 1 column (`name`), loaded now.');
      // orders.csv came before the first question: it is no news, and its tables are the replayed ones.
      expect(followUp.outputs[0]).not.toContain('`orders.csv`');
      const answer = followUp.result.answer ?? '';
      expect(answer).toContain('`person.csv`: 1000 rows × 1 column, as loaded in this conversation.');
      expect(answer).toMatch(/`orders.csv`: \d+ rows × 10 columns, as loaded in this conversation\./);
      expect(answer).toContain('loaded now');
    } finally {
      await thread.close();
    }
  });
});
