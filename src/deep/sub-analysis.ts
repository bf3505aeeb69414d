import path from 'node:path';
import { openThread, type Thread, type ThreadOptions, type TurnResult } from '../agent/index.ts';
import { readTrace, type ExecutionRecord } from '../trace/index.ts';
import type { WorkspaceProfile } from '../sandbox/index.ts';
import type { DeepEvent } from './deep-events.ts';
import type { DeepAnalyzeOptions } from './deep-options.ts';
import type { DeepRoles, EvidenceDraft, RoleContext } from './deep-roles.ts';
import type { Brief, SubAnalysisOutcome, SubAnalysisRecord, SubQuestion } from './deep-schema.ts';

const nowIso = () => new Date().toISOString();
const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** A sub-analysis's compressed findings, waiting to be banked. */
export interface Findings {
  record: SubAnalysisRecord;
  drafts: EvidenceDraft[];
  executions: ExecutionRecord[];
}

/** Why research stopped early (the report is then written from what exists). */
export type StopReason = 'deadline' | 'token-budget' | 'cancelled';

/** What a sub-analysis needs of the deep run that starts it. */
export interface SubAnalysisHost {
  readonly options: DeepAnalyzeOptions;
  readonly roles: DeepRoles;
  readonly runId: string;
  readonly outDir: string;
  /** The workspace's profile, made once by the run: each sub-analyst starts from it instead of profiling again. */
  readonly workspaceProfile: () => WorkspaceProfile | null;
  /** Sandbox sessions for the sub-analyses' threads. */
  readonly createSandbox: NonNullable<ThreadOptions['createSandbox']>;
  /** Aborted when research stops (cancel, deadline, token budget). */
  readonly researchSignal: AbortSignal;
  /** Stopped only by a cancel or the forced report's own time. */
  writingSignal(): AbortSignal;
  /** Read when needed: it changes while a sub-analysis runs. */
  stopReason(): StopReason | null;
  roleContext(signal: AbortSignal): RoleContext;
  addUsage(usage: { promptTokens: number; completionTokens: number }): void;
  emit(event: DeepEvent): void;
  save(): void;
  /** Takes a sub-analysis's closing thread: the run waits for it before it ends, the next sub-analysis does not. */
  release(closing: Promise<unknown>): void;
}

/** The question a sub-analyst is asked: its sub-question, and where it stands in the whole. */
export function subAnalysisInstruction(subQuestion: SubQuestion, brief: Brief): string {
  const tables = subQuestion.tables.length > 0 ? ` Start with: ${subQuestion.tables.join(', ')}.` : '';
  return (
    `${subQuestion.question}\n\n` +
    `(This is one part of a larger analysis of "${brief.question}".${tables} Answer this part only, and print every number you state.)`
  );
}

/** A sub-analysis's outcome, from how its turn ended. */
export function subAnalysisOutcome(
  result: TurnResult,
  stopReason: StopReason | null,
): { outcome: SubAnalysisOutcome; detail: string } {
  const { reason, detail } = result.termination;
  switch (reason) {
    case 'answered':
      // Facts, not a restatement of the outcome ("S2 answered: It answered.").
      return {
        outcome: 'answered',
        detail: `Answered in ${result.rounds} round${result.rounds === 1 ? '' : 's'}.`,
      };
    case 'max-rounds':
    case 'context-budget':
      return result.answer !== null
        ? { outcome: 'answered', detail: `Answered at its ${reason} limit, in ${result.rounds} rounds.` }
        : { outcome: 'incomplete', detail };
    case 'deadline':
    case 'no-progress':
    case 'repeated-failure':
    case 'asked':
      return { outcome: 'incomplete', detail };
    case 'cancelled':
      return { outcome: 'cancelled', detail: stoppedSubDetail(stopReason) };
    case 'model-unavailable':
    case 'sandbox-failure':
    case 'no-data':
    case 'rerun-cell-failed': // only re-runs end this way; listed so the switch stays exhaustive
      return { outcome: 'failed', detail };
  }
}

export function stoppedSubDetail(stopReason: StopReason | null): string {
  if (stopReason === 'deadline') return "The deep run's deadline stopped it.";
  if (stopReason === 'token-budget') return "The deep run's token budget stopped it.";
  return 'The run was cancelled while it ran.';
}

async function readExecutions(runDir: string): Promise<ExecutionRecord[]> {
  const trace = await readTrace(path.join(runDir, 'trace.jsonl'));
  return trace.records.filter((record): record is ExecutionRecord => record.type === 'execution');
}

/** Runs one sub-analysis in a thread of its own and compresses its findings; the thread is closed when it ends. */
export async function runSubAnalysis(
  host: SubAnalysisHost,
  brief: Brief,
  subQuestion: SubQuestion,
  record: SubAnalysisRecord,
): Promise<Findings | null> {
  if (host.researchSignal.aborted) {
    const stopReason = host.stopReason();
    const why: Record<StopReason, string> = {
      cancelled: 'the run was cancelled',
      deadline: "the run's deadline came first",
      'token-budget': "the run's token budget was spent",
    };
    record.detail = `Not run: ${why[stopReason ?? 'cancelled']}.`;
    record.skipReason = stopReason ?? 'cancelled';
    host.emit({ type: 'sub-analysis-end', record: { ...record } });
    host.save();
    return null;
  }
  record.runDir = `sub/${subQuestion.id}`;
  record.startedAt = nowIso();
  host.emit({ type: 'sub-analysis-start', subQuestion, runDir: path.join(host.outDir, record.runDir) });
  host.save();
  let thread: Thread | null = null;
  let findings: Findings | null = null;
  try {
    thread = await openThread(threadOptions(host, subQuestion));
    const result = await thread.ask(subAnalysisInstruction(subQuestion, brief), {
      signal: host.researchSignal,
    }).result;
    host.addUsage(result.usage);
    const { outcome, detail } = subAnalysisOutcome(result, host.stopReason());
    record.outcome = outcome;
    record.detail = detail;
    record.termination = result.termination.reason;
    record.answer = result.answer;
    if (outcome === 'answered' || outcome === 'incomplete') {
      // What it found is compressed even when the deadline or token budget has come meanwhile:
      // the forced report is written from it (only a cancel, or the report's own time, stops it).
      const signal = host.writingSignal();
      const asked = thread;
      const drafts = await host.roles.compress(
        {
          subQuestion,
          result,
          executions: await readExecutions(thread.outDir),
          askFollowUp: (question) => asked.ask(question, { signal }).result,
        },
        host.roleContext(signal),
      );
      // Follow-ups may have run cells too: ground against everything the sub-analysis printed.
      findings = { record, drafts, executions: await readExecutions(thread.outDir) };
    }
  } catch (error) {
    findings = null;
    if (host.stopReason() === 'cancelled') {
      record.outcome = 'cancelled';
      record.detail = stoppedSubDetail(host.stopReason());
    } else {
      record.outcome = 'failed';
      record.detail =
        record.termination === null
          ? `It could not run: ${errorText(error)}`
          : `It ended ${record.termination}, but compressing its findings failed: ${errorText(error)}`;
    }
  } finally {
    // Its sandbox is released as soon as it ends (not at the end of the run), and without waiting for the
    // container to go: stopping and removing it took 65-110 ms, in which the next sub-analysis of its slot
    // could not start. The run waits for every release before it ends, so it leaves no container behind.
    if (thread !== null) host.release(thread.close().catch(() => undefined));
    record.endedAt = nowIso();
    host.emit({ type: 'sub-analysis-end', record: { ...record, evidenceIds: [...record.evidenceIds] } });
    host.save();
  }
  return findings;
}

/** The sub-analyst's thread: the loop's limits of the deep options, its own folder `sub/<id>/`, sessions of the run. */
function threadOptions(host: SubAnalysisHost, subQuestion: SubQuestion): ThreadOptions {
  const {
    instruction: _instruction,
    roles: _roles,
    maxSubAnalyses: _maxSubAnalyses,
    concurrency: _concurrency,
    maxPlanningRounds: _maxPlanningRounds,
    deadlineMs: _deadlineMs,
    finalReportMs: _finalReportMs,
    tokenBudget: _tokenBudget,
    mayAsk: _mayAsk,
    warmPool: _warmPool,
    onEvent: _onEvent,
    signal: _signal,
    outDir: _outDir,
    runsDir: _runsDir,
    runId: _runId,
    createSandbox: _createSandbox,
    model: _model,
    ...loopOptions
  } = host.options;
  const profile = host.workspaceProfile();
  return {
    ...loopOptions,
    ...(profile === null ? {} : { workspaceProfile: profile }),
    model: host.roles.subAnalystModel(subQuestion),
    workspaceDir: host.options.workspaceDir,
    outDir: path.join(host.outDir, 'sub', subQuestion.id),
    runId: `${host.runId}-${subQuestion.id}`,
    createSandbox: host.createSandbox,
    // Nobody is there to answer a sub-analyst's question: it gets the fixed reply and goes on.
    askMode: 'reply',
  };
}
