import { mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { SandboxFactory, TurnResult } from '../../../src/agent/index.ts';
import { openThread } from '../../../src/agent/index.ts';
import type {
  Brief,
  DeepRecord,
  DeepRoles,
  EvidenceItem,
  EvidenceNumber,
  OutlineSection,
  SubAnalysisRecord,
  SubQuestion,
  WrittenSection,
} from '../../../src/deep/index.ts';
import { createOfflineDeepRoles, writeDeepRecord } from '../../../src/deep/index.ts';
import { createSandbox as createDockerSandbox } from '../../../src/sandbox/index.ts';
import type { WorkspaceProfile } from '../../../src/sandbox/index.ts';
import type { ExecutionRecord } from '../../../src/trace/index.ts';
import {
  buildNumberIndex,
  findNumberMentions,
  groundMention,
  groundingSources,
  readTrace,
} from '../../../src/trace/index.ts';

/**
 * The steps of a deep analysis driven by hand, with real parts: a sandbox
 * profiles the workspace, the offline roles scope and supervise, each
 * sub-analysis is an ordinary thread in a sandbox session of its own (several
 * at once) writing `sub/S1/`…, then compress, evidence ids and grounding,
 * outline, sections, and `deep.json` through `writeDeepRecord`.
 *
 * This stands in for the engine (`deepAnalyze`, built beside this on another
 * branch) so that the offline roles and the deep report are tested on real
 * runs now; it does only what the deep README says the engine does, the
 * simplest way (no deadline, no token budget, no gap rounds: the offline
 * planner sends none).
 */
export interface OfflineDeepRunOptions {
  workspaceDir: string;
  question: string;
  /** The deep run's folder: `deep.json` and `sub/<id>/`. */
  outDir: string;
  /** Default 4. */
  maxSubAnalyses?: number;
  /** Sub-analyses at once. Default the machine's cores. */
  concurrency?: number;
  /** Default: a cold Docker session each (`createSandbox`); pass a warm pool's `acquire`. */
  createSandbox?: SandboxFactory;
  roles?: DeepRoles;
  /** Rounds per sub-analysis. Default 30. */
  maxRounds?: number;
}

export interface OfflineDeepRun {
  record: DeepRecord;
  /** When each sub-analysis's thread started and ended (ms since the epoch), by id. */
  timings: Map<string, { startedMs: number; endedMs: number }>;
}

export interface SubRun {
  subQuestion: SubQuestion;
  turn: TurnResult | null;
  executions: ExecutionRecord[];
  error: string | null;
  startedAt: string;
  endedAt: string;
  startedMs: number;
  endedMs: number;
}

/** Runs `work` over `items` with at most `limit` at once; results in the items' order. */
async function inParallel<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return results;
}

async function profileWorkspace(
  workspaceDir: string,
  createSandbox: SandboxFactory,
): Promise<WorkspaceProfile> {
  const session = await createSandbox({ workspaceDir });
  try {
    return await session.profileWorkspace();
  } finally {
    await session.close();
  }
}

async function runSubAnalysis(
  subQuestion: SubQuestion,
  options: OfflineDeepRunOptions,
  roles: DeepRoles,
  createSandbox: SandboxFactory,
): Promise<SubRun> {
  const startedMs = Date.now();
  const startedAt = new Date(startedMs).toISOString();
  const outDir = path.join(options.outDir, 'sub', subQuestion.id);
  try {
    const thread = await openThread({
      workspaceDir: options.workspaceDir,
      model: roles.subAnalystModel(subQuestion),
      outDir,
      runId: subQuestion.id,
      createSandbox,
      askMode: 'reply',
      maxRounds: options.maxRounds ?? 30,
    });
    let turn: TurnResult;
    try {
      turn = await thread.ask(subQuestion.question).result;
    } finally {
      await thread.close();
    }
    const trace = await readTrace(path.join(outDir, 'trace.jsonl'));
    const executions = trace.records.filter(
      (record): record is ExecutionRecord => record.type === 'execution',
    );
    const endedMs = Date.now();
    return {
      subQuestion,
      turn,
      executions,
      error: null,
      startedAt,
      endedAt: new Date(endedMs).toISOString(),
      startedMs,
      endedMs,
    };
  } catch (error) {
    const endedMs = Date.now();
    return {
      subQuestion,
      turn: null,
      executions: [],
      error: error instanceof Error ? error.message : String(error),
      startedAt,
      endedAt: new Date(endedMs).toISOString(),
      startedMs,
      endedMs,
    };
  }
}

/** Numbers of a text, each looked up in the outputs given (ids already `S1:E4`). */
function groundNumbers(
  text: string,
  executions: readonly { subId: string; execution: ExecutionRecord }[],
): EvidenceNumber[] {
  const index = buildNumberIndex(
    executions.map(({ subId, execution }) => ({
      ...groundingSources([execution])[0]!,
      outputId: `${subId}:${execution.outputId}`,
    })),
  );
  return findNumberMentions(text).map((mention) => {
    const grounded = groundMention(mention, index);
    return { text: grounded.text, output: grounded.outputId, verified: grounded.verified };
  });
}

export async function runOfflineDeepAnalysis(options: OfflineDeepRunOptions): Promise<OfflineDeepRun> {
  const roles = options.roles ?? createOfflineDeepRoles({ maxSubAnalyses: options.maxSubAnalyses ?? 4 });
  const createSandbox = options.createSandbox ?? createDockerSandbox;
  const concurrency = Math.max(1, options.concurrency ?? os.availableParallelism());
  const signal = new AbortController().signal;
  const context = { signal, onUsage: () => undefined };
  const startedAt = new Date().toISOString();
  await mkdir(options.outDir, { recursive: true });

  const profile = await profileWorkspace(options.workspaceDir, createSandbox);
  const scoped = await roles.scope({ question: options.question, profile, mayAsk: false }, context);
  if (!('brief' in scoped)) throw new Error('The offline scope never asks.');
  const brief = scoped.brief;
  const drafts = await roles.supervise(
    { brief, profile, maxSubAnalyses: options.maxSubAnalyses ?? 4 },
    context,
  );
  const subQuestions: SubQuestion[] = drafts.map((draft, index) => ({
    id: `S${index + 1}`,
    round: 0,
    ...draft,
  }));

  const runs = await inParallel(subQuestions, concurrency, (sub) =>
    runSubAnalysis(sub, options, roles, createSandbox),
  );

  const record = await assembleDeepRecord({
    roles,
    brief,
    runs,
    question: options.question,
    runId: path.basename(options.outDir),
    startedAt,
    concurrency,
  });
  await writeDeepRecord(options.outDir, record);
  return {
    record,
    timings: new Map(
      runs.map((run) => [run.subQuestion.id, { startedMs: run.startedMs, endedMs: run.endedMs }]),
    ),
  };
}

export interface AssembleInput {
  roles: DeepRoles;
  brief: Brief;
  /** Each sub-analysis as it ran, in the order of its id. */
  runs: readonly SubRun[];
  question: string;
  runId: string;
  startedAt: string;
  /** Default now. */
  endedAt?: string;
  concurrency: number;
}

/** After the sub-analyses: compress, evidence ids and grounding, outline, sections, the record. */
export async function assembleDeepRecord(input: AssembleInput): Promise<DeepRecord> {
  const { roles, brief, runs, concurrency, startedAt } = input;
  const context = { signal: new AbortController().signal, onUsage: () => undefined };
  const evidence: EvidenceItem[] = [];
  const subAnalyses: SubAnalysisRecord[] = [];
  const executionsOf = new Map<string, ExecutionRecord[]>();
  for (const run of runs) {
    const { subQuestion, turn } = run;
    executionsOf.set(subQuestion.id, run.executions);
    const ids: string[] = [];
    if (turn !== null) {
      const evidenceDrafts = await roles.compress(
        {
          subQuestion,
          result: turn,
          executions: run.executions,
          askFollowUp: () => Promise.reject(new Error('The offline roles ask no follow-up.')),
        },
        context,
      );
      for (const draft of evidenceDrafts) {
        const id = `EV${evidence.length + 1}`;
        const cited = run.executions
          .filter((execution) => draft.outputs.includes(execution.outputId))
          .map((execution) => ({ subId: subQuestion.id, execution }));
        evidence.push({
          id,
          subAnalysisId: subQuestion.id,
          claim: draft.claim,
          numbers: groundNumbers(draft.claim, cited),
          outputs: draft.outputs.map((output) => `${subQuestion.id}:${output}`),
          figures: draft.figures.map((figure) => `${subQuestion.id}:${figure}`),
        });
        ids.push(id);
      }
    }
    const answered = turn?.termination.reason === 'answered';
    subAnalyses.push({
      id: subQuestion.id,
      question: subQuestion.question,
      tables: subQuestion.tables,
      round: subQuestion.round,
      outcome: turn === null ? 'failed' : answered ? 'answered' : 'incomplete',
      termination: turn?.termination.reason ?? null,
      detail:
        turn === null
          ? `The sub-analysis failed: ${run.error ?? 'unknown error'}`
          : `${answered ? 'Answered' : `Ended ${turn.termination.reason}`} in ${turn.rounds} rounds; ${ids.length} evidence items.`,
      runDir: `sub/${subQuestion.id}`,
      startedAt: run.startedAt,
      endedAt: run.endedAt,
      answer: turn?.answer ?? null,
      evidenceIds: ids,
    });
  }

  const outline = await roles.plan({ brief, evidence, round: 1, maxRounds: 1 }, context);
  const sectionsOutline: OutlineSection[] = outline.sections.map((section, index) => ({
    id: `SEC${index + 1}`,
    ...section,
  }));
  const sections: WrittenSection[] = [];
  for (const section of sectionsOutline) {
    const given = evidence.filter((item) => section.evidenceIds.includes(item.id));
    const markdown = await roles.write({ brief, section, evidence: given }, context);
    const cited = [
      ...new Set(Array.from(markdown.matchAll(/\[(EV\d+)\]/g), (match) => match[1] ?? '')),
    ].filter((id) => section.evidenceIds.includes(id));
    const outputs = given.flatMap((item) =>
      item.outputs.flatMap((output) => {
        const [subId = '', outputId] = output.split(':');
        const execution = executionsOf.get(subId)?.find((entry) => entry.outputId === outputId);
        return execution === undefined ? [] : [{ subId, execution }];
      }),
    );
    sections.push({
      id: section.id,
      title: section.title,
      markdown,
      citedEvidenceIds: cited,
      numbers: groundNumbers(markdown.replace(/\[EV\d+\]/g, ''), outputs),
      error: null,
    });
  }

  const anyEvidence = evidence.length > 0;
  const record: DeepRecord = {
    type: 'deep-analysis',
    version: 1,
    runId: input.runId,
    question: input.question,
    startedAt,
    endedAt: input.endedAt ?? new Date().toISOString(),
    model: { id: roles.modelId, offline: roles.offline },
    concurrency,
    brief,
    ask: null,
    subAnalyses,
    evidence,
    outline: { sections: sectionsOutline, rounds: 1 },
    sections,
    termination: anyEvidence
      ? {
          reason: 'answered',
          detail: `${sections.length} sections written from ${evidence.length} evidence items.`,
        }
      : { reason: 'failed', detail: 'No sub-analysis produced evidence.' },
    usage: { promptTokens: 0, completionTokens: 0 },
  };
  return record;
}
