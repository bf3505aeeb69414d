import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { AnswerGrounder } from '../../src/server/answer-grounding.ts';

/**
 * The server grounded every answer by reading the thread's whole trace again
 * (about 20 ms a follow-up on a short thread, growing with it); it now reads a
 * resumed thread's trace once and adds each cell as it ends. What an answer is
 * grounded against must not change: the recorded outputs and the new ones.
 */
const recordedTrace = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  'fixtures',
  'traces',
  'student-loan',
  'trace.jsonl',
);
const noTables = {
  stdout: { text: 'Total loans: 40577\n', truncated: false, totalBytes: 19 },
  value: null,
  tables: [],
};

let dir = '';
afterEach(async () => {
  if (dir !== '') await rm(dir, { recursive: true, force: true });
});

describe('answer grounding in the server', () => {
  it('a resumed thread: numbers printed before the restart and in the new turn are both found', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'datalyst-grounder-'));
    await copyFile(recordedTrace, path.join(dir, 'trace.jsonl'));
    const grounder = new AnswerGrounder(dir, true);
    grounder.start();
    grounder.add('E99', noTables);
    const grounding = await grounder.ground('There are 1194 rows and 40577 loans, not 31337.');
    const numbers = grounding?.segments.flatMap((segment) => segment.numbers) ?? [];
    expect(numbers.map(({ text, verified, outputId }) => [text, verified, outputId])).toEqual([
      ['1194', true, 'E1'],
      ['40577', true, 'E99'],
      ['31337', false, null],
    ]);
  });

  it('a new thread reads no trace: only its own cells ground its answers', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'datalyst-grounder-'));
    const grounder = new AnswerGrounder(dir, false);
    grounder.add('E1', noTables);
    const grounding = await grounder.ground('40577 loans.');
    expect(grounding?.segments[0]?.numbers[0]).toMatchObject({
      text: '40577',
      verified: true,
      outputId: 'E1',
    });
  });

  it('a trace that cannot be read: the answer goes out without links', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'datalyst-grounder-'));
    const grounder = new AnswerGrounder(dir, true);
    expect(await grounder.ground('40577 loans.')).toBeNull();
  });
});
