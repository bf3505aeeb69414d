import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { streamAnalysis } from '../../src/agent/analyze.ts';
import type { AgentEvent, AnalysisResult } from '../../src/agent/events.ts';
import { createOpenAIChatModel } from '../../src/agent/openai-chat-model.ts';
import { formatCellOutput } from '../../src/sandbox/index.ts';
import { readTrace } from '../../src/trace/reader.ts';
import type { TraceRecord } from '../../src/trace/schema.ts';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../support/fake-openai-server.ts';
import { differenceBeyondTiedModes } from '../support/tied-modes.ts';
import { loadStudentLoanTrajectory, studentLoanDataDir } from './support/student-loan.ts';

/**
 * The DeepAnalyze student-loan run replayed end to end: its eight model turns
 * are the fake model's script (served over HTTP, cut at </Code> like vLLM
 * does), its data folder the workspace, the real Docker sandbox runs the seven
 * cells in one session. Every <Execute> the loop produces must equal the one
 * the real run recorded, and the run must end with the recorded <Answer>.
 */

const trajectory = loadStudentLoanTrajectory();
let server: FakeOpenAIServer;
let runsDir: string;
let result: AnalysisResult;
const events: AgentEvent[] = [];
let trace: TraceRecord[];

beforeAll(async () => {
  server = await startFakeOpenAIServer({
    script: trajectory.modelTurns.map((text) => ({ type: 'text' as const, text, chunkChars: 64 })),
  });
  runsDir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-replay-'));
  const model = createOpenAIChatModel({ baseUrl: server.baseUrl, model: 'DeepAnalyze-8B', temperature: 0.5 });
  for await (const event of streamAnalysis({
    instruction: trajectory.instruction,
    workspaceDir: studentLoanDataDir,
    model,
    profile: 'deepanalyze',
    outDir: path.join(runsDir, 'run'),
  })) {
    events.push(event);
    if (event.type === 'run-end') result = event.result;
  }
  trace = (await readTrace(path.join(runsDir, 'run', 'trace.jsonl'))).records;
}, 600_000);

afterAll(async () => {
  await server.close();
  await rm(runsDir, { recursive: true, force: true });
});

it('reaches the recorded <Answer> in eight rounds', () => {
  expect(result.termination).toEqual({ reason: 'answered', detail: expect.any(String) });
  expect(result.rounds).toBe(8);
  const recordedAnswer = /<Answer>([\s\S]*)<\/Answer>/.exec(trajectory.modelTurns.at(-1) ?? '')?.[1]?.trim();
  expect(result.answer).toBe(recordedAnswer);
});

it('reproduces all seven recorded <Execute> outputs exactly (a tied mode aside)', () => {
  const executions = trace.filter((record) => record.type === 'execution');
  expect(executions).toHaveLength(7);
  executions.forEach((execution, index) => {
    if (execution.result.status === 'cancelled') throw new Error(`E${index + 1} was cancelled`);
    const result = { ...execution.result, status: execution.result.status };
    // Exactly, but for describe()'s `top` of a tied mode, which depends on the CPU (tied-modes.ts).
    expect(
      differenceBeyondTiedModes(
        formatCellOutput(result).trim(),
        trajectory.executeOutputs[index]?.trim() ?? '',
        studentLoanDataDir,
      ),
      `cell E${index + 1}`,
    ).toBeNull();
    expect(execution.executeText.startsWith(formatCellOutput(result).trimEnd())).toBe(true);
  });
});

it('sent the outputs back as DeepAnalyze expects: role execute, no system prompt', () => {
  const last = server.completionRequests.at(-1)?.body?.messages ?? [];
  expect(last[0]?.role).toBe('user');
  expect(
    last[0]?.content.startsWith('# Instruction\nGenerate a data science report.\n\n# Data\nFile 1: '),
  ).toBe(true);
  expect(last.filter((message) => message.role === 'execute')).toHaveLength(7);
  expect(last.filter((message) => message.role === 'system')).toHaveLength(0);
});

it('copied the files the cells wrote into the run folder as artifacts', () => {
  const artifacts = trace.flatMap((record) => (record.type === 'artifact' ? [record.path] : []));
  expect(artifacts).toEqual(
    expect.arrayContaining([
      'processed_enrollment.csv',
      'merged_enrollment_data.csv',
      'school_distribution.png',
    ]),
  );
  expect(events.filter((event) => event.type === 'artifact-saved').length).toBe(artifacts.length);
});
