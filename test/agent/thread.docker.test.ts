import { spawn } from 'node:child_process';
import { cp, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/agent/events.ts';
import { createOpenAIChatModel } from '../../src/agent/openai-chat-model.ts';
import { openThread, resumeThread } from '../../src/agent/thread/index.ts';
import { notebookSchema, renderRunFolder } from '../../src/report/index.ts';
import { readTrace } from '../../src/trace/reader.ts';
import { splitTurns } from '../../src/trace/turns.ts';
import { startFakeOpenAIServer, type ScriptEntry } from '../support/fake-openai-server.ts';
import { executeInRunner } from '../support/notebook-runner.ts';
import { useTempDirs } from '../support/temp-dirs.ts';

/** Threads through the real sandbox: one kernel across questions, the report and notebook of all of them, resume after SIGKILL. */

const tempDirs = useTempDirs();

async function workspace(): Promise<string> {
  const dir = await tempDirs.make('datalyst-thread-ws-');
  const rows = [
    'month,region,revenue',
    '1,North,10',
    '1,South,20',
    '2,North,30',
    '2,South,5',
    '3,North,7',
    '3,South,8',
  ];
  await writeFile(path.join(dir, 'sales.csv'), `${rows.join('\n')}\n`);
  return dir;
}

async function runsDir(): Promise<string> {
  const dir = await tempDirs.make('datalyst-thread-runs-');
  return dir;
}

const code = (text: string) => ({
  type: 'text' as const,
  text: `<Analyze>Next.</Analyze>\n<Code>\n${text}\n</Code>`,
});
const answer = (text: string) => ({ type: 'text' as const, text: `<Answer>${text}</Answer>` });
const ask = (text: string) => ({ type: 'text' as const, text: `<Ask>${text}</Ask>` });

function executeTexts(events: readonly AgentEvent[]): string[] {
  return events.flatMap((event) => (event.type === 'execution-end' ? [event.result.stdout.text] : []));
}

async function collect(turn: AsyncIterable<AgentEvent>): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for await (const event of turn) events.push(event);
  return events;
}

describe('a thread through the real sandbox', () => {
  it('holds a three-turn conversation in one kernel; the report and the re-executed notebook hold all three turns', async () => {
    const script: ScriptEntry[] = [
      code("import pandas as pd\ndf = pd.read_csv('sales.csv')\nprint(df['revenue'].sum())"),
      answer('The total revenue is 80.'),
      code("by_month = df.groupby('month')['revenue'].sum()\nprint(by_month.to_dict())"),
      ask('Which region do you mean?'),
      code("print(int(df[df.region == 'North']['revenue'].sum()))"),
      answer('North brings 47.'),
    ];
    const server = await startFakeOpenAIServer({ script });
    try {
      const workspaceDir = await workspace();
      const outDir = path.join(await runsDir(), 'thread');
      const thread = await openThread({
        workspaceDir,
        outDir,
        model: createOpenAIChatModel({ baseUrl: server.baseUrl, model: 'fake-model' }),
      });
      const first = await collect(thread.ask('What is the total revenue?'));
      expect(executeTexts(first)).toEqual(['80\n']);
      const second = await collect(thread.ask('Now by month, for one region.'));
      // Turn 2 uses the DataFrame turn 1 built: the kernel carried over.
      expect(executeTexts(second)).toEqual(['{1: 30, 2: 35, 3: 15}\n']);
      expect(second.at(-1)).toMatchObject({
        type: 'turn-end',
        result: { termination: { reason: 'asked' }, ask: 'Which region do you mean?' },
      });
      const third = await collect(thread.ask('North.'));
      expect(executeTexts(third)).toEqual(['47\n']);
      expect(third.at(-1)).toMatchObject({
        type: 'turn-end',
        result: { turn: 3, answer: 'North brings 47.' },
      });
      const summary = await thread.close();
      expect(summary).toMatchObject({ turns: 3, answer: 'North brings 47.' });

      await renderRunFolder(outDir, { formats: ['html', 'ipynb'] });
      const html = await readFile(path.join(outDir, 'report.html'), 'utf8');
      for (const text of [
        'What is the total revenue?',
        'Now by month, for one region.',
        'North.',
        'Which region do you mean?',
        'North brings',
      ])
        expect(html).toContain(text);
      const turns = splitTurns((await readTrace(path.join(outDir, 'trace.jsonl'))).records);
      expect(turns.map((turn) => turn.end?.termination.reason)).toEqual(['answered', 'asked', 'answered']);

      const workDir = path.join(await runsDir(), 'notebook');
      await cp(workspaceDir, workDir, { recursive: true });
      const executed = await executeInRunner(workDir, path.join(outDir, 'analysis.ipynb'));
      const printed = (id: string) => {
        const cell = executed.cells.find((candidate) => candidate.id === id);
        return cell?.cell_type === 'code'
          ? cell.outputs
              .map((output) => (output.output_type === 'stream' ? [output.text].flat().join('') : ''))
              .join('')
          : null;
      };
      expect([printed('E1'), printed('E2'), printed('E3')]).toEqual([
        '80\n',
        '{1: 30, 2: 35, 3: 15}\n',
        '47\n',
      ]);
      const markdown = notebookSchema.parse(executed).cells.filter((cell) => cell.cell_type === 'markdown');
      const headings = markdown
        .map((cell) => [cell.source].flat().join(''))
        .filter((text) => text.startsWith('## '));
      expect(
        headings.filter((text) => /^## (Question|Reply) \d/.test(text)).map((text) => text.split('\n')[0]),
      ).toEqual(['## Question 1', '## Question 2', '## Reply 3']);
    } finally {
      await server.close();
    }
  });

  it('resumes after SIGKILL of its process: the cells are replayed, the outputs checked, and turn 3 uses a variable of turn 1', async () => {
    const server = await startFakeOpenAIServer({
      script: [
        code("import pandas as pd\ndf = pd.read_csv('sales.csv')\nprint(len(df))"),
        answer('6 rows.'),
        code('import time\nstamp = time.time_ns()\nprint(stamp)'),
        answer('Stamped.'),
        code("print(int(df['revenue'].max()))"),
        answer('The largest revenue is 30.'),
      ],
    });
    const workspaceDir = await workspace();
    const outDir = path.join(await runsDir(), 'killed');
    const script = path.join(import.meta.dirname, 'support', 'thread-process.ts');
    try {
      const child = spawn(process.execPath, ['--import', 'tsx', script], {
        env: {
          ...process.env,
          DATALYST_TEST_BASE_URL: server.baseUrl,
          DATALYST_TEST_OUT_DIR: outDir,
          DATALYST_TEST_WORKSPACE: workspaceDir,
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const exited = new Promise<NodeJS.Signals | null>((resolve) =>
        child.on('exit', (_code, signal) => resolve(signal)),
      );
      await new Promise<void>((resolve, reject) => {
        let output = '';
        child.stdout.on('data', (data: Buffer) => {
          output += data.toString();
          if (output.includes('two-turns-done')) resolve();
        });
        child.on('exit', () => reject(new Error(`the thread process ended early:\n${output}`)));
      });
      const childPid = child.pid ?? 0;
      child.kill('SIGKILL');
      expect(await exited).toBe('SIGKILL');
      // The killed process's container is ours to remove (a reaper would, at the next start).
      // Its stdin closed with the process, so the engine may already be removing it (AutoRemove):
      // "removal already in progress" and "no such container" are both the outcome we want.
      const orphans = await execa('docker', [
        'ps',
        '-aq',
        '--filter',
        `label=org.datalyst.owner-pid=${childPid}`,
      ]);
      if (orphans.stdout.trim() !== '') {
        const removal = await execa('docker', ['rm', '-f', ...orphans.stdout.trim().split('\n')], {
          reject: false,
        });
        if (removal.exitCode !== 0) expect(removal.stderr).toMatch(/already in progress|No such container/);
      }

      const before = await readTrace(path.join(outDir, 'trace.jsonl'));
      expect(before.partial).toBe(true);
      const resumed = await resumeThread(outDir, {
        model: createOpenAIChatModel({ baseUrl: server.baseUrl, model: 'fake-model' }),
      });
      const events = await collect(resumed.ask('And the largest revenue?'));
      const replay = events.find((event) => event.type === 'replay-end');
      expect(replay).toMatchObject({ summary: { cells: 2, replayed: 2 } });
      // The timestamp differs on replay, the row count does not: the check names exactly that.
      expect(
        replay?.type === 'replay-end' ? replay.summary.mismatches.map((item) => item.outputId) : null,
      ).toEqual(['E2']);
      const notice = events.find((event) => event.type === 'notice' && event.kind === 'replay');
      expect(notice).toMatchObject({ text: expect.stringContaining('E2: printed') });
      expect(executeTexts(events)).toEqual(['30\n']);
      expect(events.at(-1)).toMatchObject({
        type: 'turn-end',
        result: { turn: 3, answer: 'The largest revenue is 30.', outputIds: ['E3'] },
      });
      await resumed.close();

      const told = server.completionRequests[4]?.body?.messages?.at(-1)?.content ?? '';
      expect(told).toContain('These outputs now differ from the ones you saw: E2');
      expect(told).toMatch(/And the largest revenue\?$/);
      const trace = await readTrace(path.join(outDir, 'trace.jsonl'));
      expect(trace.partial).toBe(false);
      expect(splitTurns(trace.records).map((turn) => turn.end?.termination.reason)).toEqual([
        'answered',
        'answered',
        'answered',
      ]);
      expect(trace.records.filter((record) => record.type === 'replay')).toHaveLength(1);
    } finally {
      await server.close();
    }
  });
});
