import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import Docker from 'dockerode';
import { afterEach, expect, it } from 'vitest';
import {
  analyze,
  createOpenAIChatModel,
  rerunAnalysis,
  streamAnalysis,
  type AnalysisResult,
  type RerunResult,
} from '../../src/index.ts';
import { containerLabels } from '../../src/sandbox/index.ts';
import { startFakeOpenAIServer } from '../support/fake-openai-server.ts';
import { cleanUpHarness, makeRunsDir, makeWorkspace, readTrace } from './support/loop-harness.ts';

afterEach(cleanUpHarness);

async function ownContainers(): Promise<Docker.ContainerInfo[]> {
  return new Docker().listContainers({
    all: true,
    filters: { label: [`${containerLabels.ownerPid}=${process.pid}`] },
  });
}

// Quick on the recorded data; slow where the new data holds `slow.txt`.
const code = [
  'import os, time',
  "if os.path.exists('slow.txt'):",
  "    print('slow', flush=True)",
  '    time.sleep(120)',
  "print('total 3030')",
].join('\n');

/** A version 1 trace (one question, no turn records), as runs before threads wrote them. */
async function asVersion1(runDir: string): Promise<void> {
  const file = path.join(runDir, 'trace.jsonl');
  const lines = (await readFile(file, 'utf8'))
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((record) => record.type !== 'turn-start' && record.type !== 'turn-end')
    .map((record) => (record.type === 'run-start' ? { ...record, version: 1 } : record));
  await writeFile(file, `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);
}

it('reads a version 1 trace, and Ctrl-C mid-cell ends the re-run cancelled with the stopped cell and its partial output in the trace, and no container', async () => {
  const server = await startFakeOpenAIServer({
    script: [
      { type: 'text', text: `<Code>\n${code}\n</Code>` },
      { type: 'text', text: '<Answer>The total is 3030.</Answer>' },
    ],
  });
  try {
    const runsDir = await makeRunsDir();
    const workspace = await makeWorkspace();
    const recorded = await analyze({
      instruction: 'What is the total?',
      workspaceDir: workspace,
      model: createOpenAIChatModel({ baseUrl: server.baseUrl, model: 'm' }),
      outDir: path.join(runsDir, 'recorded'),
    });
    expect(recorded.termination.reason).toBe('answered');
    await asVersion1(recorded.outDir);

    // The same data again: the v1 trace re-runs, the number stays grounded.
    const same = await rerunAnalysis({
      runDir: recorded.outDir,
      workspaceDir: workspace,
      outDir: path.join(runsDir, 'same'),
    });
    expect(same.termination.reason).toBe('answered');
    expect(same.numbers.map((number) => [number.oldText, number.status])).toEqual([['3030', 'unchanged']]);

    await writeFile(path.join(workspace, 'slow.txt'), 'take your time\n');
    const controller = new AbortController();
    let sawContainer = false;
    const result: RerunResult = await rerunAnalysis({
      runDir: recorded.outDir,
      workspaceDir: workspace,
      outDir: path.join(runsDir, 'cancelled'),
      signal: controller.signal,
      onEvent: (event) => {
        if (event.type === 'execution-start') {
          void ownContainers().then((containers) => {
            sawContainer = containers.length > 0;
            setTimeout(() => controller.abort(), 1000);
          });
        }
      },
    });
    expect(result.termination.reason).toBe('cancelled');
    expect(sawContainer).toBe(true);
    expect(await ownContainers()).toEqual([]);
    const records = await readTrace(result.outDir);
    expect(records.at(-1)).toMatchObject({ type: 'run-end', termination: { reason: 'cancelled' } });
    // The stopped cell is in the trace with what it printed before the stop, as `analyze` records it.
    const executions = records.filter((record) => record.type === 'execution');
    expect(executions).toHaveLength(1);
    expect(executions[0]).toMatchObject({
      outputId: 'E1',
      code,
      result: { status: 'cancelled', error: null, stdout: { text: 'slow\n' } },
    });
    expect(result.cells).toEqual([
      { outputId: 'E1', status: 'cancelled', recordedStatus: 'ok', detail: 'cancelled' },
    ]);
  } finally {
    await server.close();
  }
}, 120_000);

it('re-running a run that was cancelled ends with its own outcome (no-progress: no answer to carry over), not "cancelled", when nobody cancels the re-run', async () => {
  const quick = "print('rows 2')";
  const slow = ['import time', "print('slow', flush=True)", 'time.sleep(120)'].join('\n');
  const server = await startFakeOpenAIServer({
    script: [
      { type: 'text', text: `<Code>\n${quick}\n</Code>` },
      { type: 'text', text: `<Code>\n${slow}\n</Code>` },
    ],
  });
  try {
    const runsDir = await makeRunsDir();
    const workspace = await makeWorkspace();
    // The recorded run: Ctrl-C while its second cell sleeps. No answer.
    const controller = new AbortController();
    let recorded: AnalysisResult | null = null;
    for await (const event of streamAnalysis({
      instruction: 'How many rows?',
      workspaceDir: workspace,
      model: createOpenAIChatModel({ baseUrl: server.baseUrl, model: 'm' }),
      outDir: path.join(runsDir, 'recorded'),
      signal: controller.signal,
    })) {
      if (event.type === 'execution-start' && event.outputId === 'E2')
        setTimeout(() => controller.abort(), 1000);
      if (event.type === 'run-end') recorded = event.result;
    }
    if (recorded === null) throw new Error('no run-end');
    expect(recorded.termination.reason).toBe('cancelled');
    expect(recorded.answer).toBeNull();

    // Its re-run: nobody cancels it.
    const result = await rerunAnalysis({
      runDir: recorded.outDir,
      workspaceDir: workspace,
      outDir: path.join(runsDir, 'rerun'),
    });
    expect(result.termination.reason).toBe('no-progress');
    expect(result.termination.detail).toContain(
      'The recorded run has no answer to carry over (it ended cancelled',
    );
    expect(result.answer).toBeNull();
    expect(result.answerSource).toBe('none');
    expect(result.cells).toEqual([
      { outputId: 'E1', status: 'ok', recordedStatus: 'ok', detail: null },
      {
        outputId: 'E2',
        status: 'not-run',
        recordedStatus: 'cancelled',
        detail: 'not run: it ended cancelled in the recorded run',
      },
    ]);
    const records = await readTrace(result.outDir);
    expect(records.at(-1)).toMatchObject({ type: 'run-end', termination: { reason: 'no-progress' } });
    expect(await ownContainers()).toEqual([]);
  } finally {
    await server.close();
  }
}, 120_000);
