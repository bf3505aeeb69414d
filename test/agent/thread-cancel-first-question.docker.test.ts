import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { expect, it } from 'vitest';
import type { AgentEvent } from '../../src/agent/events.ts';
import type { LanguageModel, ModelRequest } from '../../src/agent/language-model.ts';
import { createOfflineAnalyst, offlineAnalystTurn } from '../../src/agent/offline-analyst/index.ts';
import { openThread } from '../../src/agent/thread/index.ts';
import { readTrace } from '../../src/trace/reader.ts';
import { splitTurns } from '../../src/trace/turns.ts';
import { useTempDirs } from '../support/temp-dirs.ts';

/**
 * The first-time user's report: in `datalyst chat` with the offline analyst,
 * the first question cancelled while its cell ran, the next question was not
 * answered; the analyst went on with the old question's plan. Here through the
 * real sandbox and kernel.
 */

const tempDirs = useTempDirs();

const stillWorking = 'still working';

/**
 * The offline analyst, whose first cell also prints a line and then sleeps, so
 * that the test can cancel it while it runs. Every later turn is the analyst's own.
 */
function analystWithSlowFirstCell(): LanguageModel {
  const analyst = createOfflineAnalyst();
  let requests = 0;
  return {
    ...analyst,
    async *stream(request: ModelRequest) {
      requests += 1;
      if (requests > 1) {
        yield* analyst.stream(request);
        return;
      }
      const text = offlineAnalystTurn(request).replace(
        /\n```\n<\/Code>$/,
        `\nprint(${JSON.stringify(stillWorking)}, flush=True)\nimport time\ntime.sleep(120)\n\`\`\`\n</Code>`,
      );
      if (!text.includes('time.sleep(120)')) throw new Error('the first turn holds no cell to slow down');
      yield { type: 'text-delta' as const, text };
      yield { type: 'usage' as const, promptTokens: 0, completionTokens: 0 };
      yield { type: 'finish' as const, reason: 'stop' };
    },
  };
}

it('after the first question is cancelled mid-cell, the offline analyst answers the next question', async () => {
  const workspaceDir = await tempDirs.make('datalyst-cancel-ws-');
  const rows = ['month,region,revenue', '1,North,10', '1,South,20', '2,North,30', '2,South,5', '3,North,7'];
  await writeFile(path.join(workspaceDir, 'sales.csv'), `${rows.join('\n')}\n`);
  const outDir = path.join(await tempDirs.make('datalyst-cancel-runs-'), 'thread');
  const thread = await openThread({ workspaceDir, outDir, model: analystWithSlowFirstCell() });
  try {
    const controller = new AbortController();
    const firstTurn = thread.ask('Give me an overview of the data.', { signal: controller.signal });
    const firstEvents: AgentEvent[] = [];
    for await (const event of firstTurn) {
      firstEvents.push(event);
      // The kernel printed the line: the cell is running now.
      if (event.type === 'execution-output' && event.text.includes(stillWorking)) controller.abort();
    }
    const first = await firstTurn.result;
    expect(first.termination.reason).toBe('cancelled');
    expect(first.outputIds).toEqual(['E1']);

    const second = await thread.ask('How does the revenue differ by region?').result;
    expect(second.termination.reason).toBe('answered');
    // The analysis started over for this question (its first cell is the setup again), and its
    // answer breaks down the columns the question names; the old question names none.
    const answer = second.answer ?? '';
    expect(answer).toContain('## What the instruction asks about');
    expect(answer).toMatch(/`region`/);
    expect(answer).toMatch(/`revenue`/);
    await thread.close();

    const turns = splitTurns((await readTrace(path.join(outDir, 'trace.jsonl'))).records);
    expect(turns.map((turn) => [turn.question, turn.end?.termination.reason])).toEqual([
      ['Give me an overview of the data.', 'cancelled'],
      ['How does the revenue differ by region?', 'answered'],
    ]);
    const cells = turns[1]?.records.filter((record) => record.type === 'execution') ?? [];
    expect(cells[0]?.type === 'execution' && cells[0].code).toMatch(/^# offline-analyst step: setup$/m);
    expect(cells.every((cell) => cell.type === 'execution' && cell.result.status === 'ok')).toBe(true);
  } finally {
    await thread.close();
  }
});
