import { mkdir, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pLimit from 'p-limit';
import {
  newRunId,
  noDataDecision,
  openThread,
  type Thread,
  type ThreadOptions,
  type TurnResult,
} from '../agent/index.ts';
import { CancelledError, ConfigError, DatalystError } from '../errors/index.ts';
import type { WorkspaceProfile } from '../sandbox/index.ts';
import { readTrace, type ExecutionRecord } from '../trace/index.ts';
import { DEEP_RECORD_FILE, writeDeepRecord } from './deep-record.ts';
import type { DeepAnalysisResult, DeepEvent, DeepPhase } from './deep-events.ts';
import type { DeepAnalyzeOptions } from './deep-options.ts';
import { checkCitations, evidenceListing, fallbackSections, numberSections } from './deep-outline.ts';
import type { DeepRoles, EvidenceDraft, RoleContext, SubQuestionDraft } from './deep-roles.ts';
import {
  DEEP_RECORD_VERSION,
  type Brief,
  type DeepRecord,
  type DeepTerminationReason,
  type OutlineSection,
  type SubAnalysisOutcome,
  type SubAnalysisRecord,
  type SubQuestion,
  type WrittenSection,
} from './deep-schema.ts';
import { EvidenceBank } from './evidence-bank.ts';
import { createOfflineDeepRoles } from './offline-roles.ts';
import { createModelDeepRoles } from './model-roles.ts';
import { SessionSource } from './session-source.ts';

const nowIso = () => new Date().toISOString();
const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** A sub-analysis's compressed findings, waiting to be banked. */
interface Findings {
  record: SubAnalysisRecord;
  drafts: EvidenceDraft[];
  executions: ExecutionRecord[];
}

/** Why research stopped early (the report is then written from what exists). */
type StopReason = 'deadline' | 'token-budget' | 'cancelled';

/** The roles when the caller gives none. */
function defaultRoles(options: DeepAnalyzeOptions): DeepRoles {
  // A fresh offline roles object per run: its planner reads notes its compress step made.
  if (options.model.offline === true)
    return createOfflineDeepRoles({ maxSubAnalyses: options.maxSubAnalyses ?? 4 });
  return createModelDeepRoles(options.model);
}

/** The question a sub-analyst is asked: its sub-question, and where it stands in the whole. */
export function subAnalysisInstruction(subQuestion: SubQuestion, brief: Brief): string {
  const tables = subQuestion.tables.length > 0 ? ` Start with: ${subQuestion.tables.join(', ')}.` : '';
  return (
    `${subQuestion.question}\n\n` +
    `(This is one part of a larger analysis of "${brief.question}".${tables} Answer this part only, and print every number you state.)`
  );
}

function outcomeOf(
  result: TurnResult,
  stopReason: StopReason | null,
): { outcome: SubAnalysisOutcome; detail: string } {
  const { reason, detail } = result.termination;
  switch (reason) {
    case 'answered':
      return { outcome: 'answered', detail: 'It answered.' };
    case 'max-rounds':
    case 'context-budget':
      return result.answer !== null
        ? { outcome: 'answered', detail: `It answered at its ${reason} limit.` }
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

function stoppedSubDetail(stopReason: StopReason | null): string {
  if (stopReason === 'deadline') return "The deep run's deadline stopped it.";
  if (stopReason === 'token-budget') return "The deep run's token budget stopped it.";
  return 'The run was cancelled while it ran.';
}

async function readExecutions(runDir: string): Promise<ExecutionRecord[]> {
  const trace = await readTrace(path.join(runDir, 'trace.jsonl'));
  return trace.records.filter((record): record is ExecutionRecord => record.type === 'execution');
}

/** One deep run: the state, the phases, the record. */
class DeepRun {
  readonly runId: string;
  readonly outDir: string;
  private readonly roles: DeepRoles;
  private readonly maxSubAnalyses: number;
  private readonly concurrency: number;
  private readonly maxPlanningRounds: number;
  private readonly record: DeepRecord;
  private readonly bank = new EvidenceBank();
  private readonly sessions: SessionSource;
  private readonly limit: ReturnType<typeof pLimit>;
  private readonly startedAtMs = Date.now();
  /** Aborted by the caller's signal: everything stops. */
  private readonly cancel = new AbortController();
  /** Aborted by cancel, the deadline or the token budget: sub-analyses stop, the report is written from what exists. */
  private readonly research = new AbortController();
  /** Aborted when the forced report's own time is up. */
  private readonly finalReport = new AbortController();
  private stopReason: StopReason | null = null;
  private stopDetail = '';
  private readonly timers: NodeJS.Timeout[] = [];
  private saving: Promise<void> = Promise.resolve();
  private subAnalysesStarted = 0;
  private budgetSpent = false;
  private readonly running = new Set<Promise<unknown>>();
  private failure: DatalystError | null = null;

  constructor(
    private readonly options: DeepAnalyzeOptions,
    private readonly emitEvent: (event: DeepEvent) => void,
  ) {
    this.roles = options.roles ?? defaultRoles(options);
    this.runId = options.runId ?? newRunId();
    this.outDir = path.resolve(options.outDir ?? path.join(options.runsDir ?? 'runs', this.runId));
    this.maxSubAnalyses = Math.max(1, Math.floor(options.maxSubAnalyses ?? 4));
    this.concurrency = Math.max(1, Math.floor(options.concurrency ?? os.availableParallelism()));
    this.maxPlanningRounds = Math.max(1, Math.floor(options.maxPlanningRounds ?? 2));
    this.limit = pLimit(this.concurrency);
    this.sessions = new SessionSource(options, Math.min(this.concurrency, this.maxSubAnalyses));
    this.record = {
      type: 'deep-analysis',
      version: DEEP_RECORD_VERSION,
      runId: this.runId,
      question: options.instruction,
      startedAt: new Date(this.startedAtMs).toISOString(),
      endedAt: null,
      model: { id: this.roles.modelId, offline: this.roles.offline },
      concurrency: this.concurrency,
      brief: null,
      ask: null,
      subAnalyses: [],
      evidence: [],
      outline: null,
      sections: [],
      termination: { reason: 'cancelled', detail: 'The run is still going (or its process died).' },
      usage: { promptTokens: 0, completionTokens: 0 },
    };
  }

  async run(): Promise<DeepAnalysisResult> {
    // Before anything else: a folder that already holds a deep run is refused, untouched.
    await this.claimFolder();
    const signal = this.options.signal;
    const onAbort = () => this.stop('cancelled', 'The run was cancelled.');
    if (signal?.aborted) onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    const deadlineMs = this.options.deadlineMs ?? null;
    if (deadlineMs !== null) {
      this.timers.push(
        setTimeout(
          () =>
            this.stop(
              'deadline',
              `The run reached its deadline of ${deadlineMs} ms; the report was written from what was found by then.`,
            ),
          deadlineMs,
        ),
      );
    }
    let termination: DeepRecord['termination'];
    try {
      this.emit({
        type: 'deep-start',
        runId: this.runId,
        outDir: this.outDir,
        question: this.options.instruction,
        modelId: this.roles.modelId,
        concurrency: this.concurrency,
      });
      this.save();
      termination = await this.phases();
    } catch (error) {
      termination = this.endingFor(error);
    } finally {
      signal?.removeEventListener('abort', onAbort);
      for (const timer of this.timers) clearTimeout(timer);
      // Sub-analyses still running (a phase threw) are stopped and closed before the run ends.
      if (this.running.size > 0) {
        this.research.abort(new CancelledError(new Error('The deep run ended.')));
        await Promise.allSettled([...this.running]);
      }
      await this.sessions.close();
    }
    this.record.termination = termination;
    this.record.endedAt = nowIso();
    this.record.evidence = [...this.bank.items];
    this.save();
    await this.saving;
    const result: DeepAnalysisResult = {
      runId: this.runId,
      outDir: this.outDir,
      recordPath: path.join(this.outDir, DEEP_RECORD_FILE),
      termination,
      record: structuredClone(this.record),
      durationMs: Date.now() - this.startedAtMs,
      error: termination.reason === 'failed' ? this.failure : null,
    };
    this.emit({ type: 'deep-end', result });
    return result;
  }

  private async phases(): Promise<DeepRecord['termination']> {
    // Profile, once, inside the sandbox; that session then serves the first sub-analysis.
    this.phase('profile', 0);
    const session = await this.sessions.first(this.research.signal);
    const profile: WorkspaceProfile = await session.profileWorkspace({ signal: this.research.signal });
    const noData = noDataDecision(profile, true);
    if (noData !== null) return { reason: 'no-data', detail: noData.detail };

    this.phase('scope', 0);
    const scoped = await this.roles.scope(
      { question: this.options.instruction, profile, mayAsk: this.options.mayAsk === true },
      this.roleContext(this.research.signal),
    );
    if ('ask' in scoped) {
      this.record.ask = scoped.ask;
      return { reason: 'asked', detail: 'The scope step asked a question before any research.' };
    }
    const brief = scoped.brief;
    this.record.brief = brief;
    this.save();

    this.phase('supervise', 0);
    const drafts = await this.roles.supervise(
      { brief, profile, maxSubAnalyses: this.maxSubAnalyses },
      this.roleContext(this.research.signal),
    );
    await this.runResearch(brief, drafts, 0);

    let sections: OutlineSection[] | null = null;
    let planFailure: string | null = null;
    let rounds = 0;
    for (let round = 1; round <= this.maxPlanningRounds && !this.isCancelled(); round += 1) {
      rounds = round;
      if (this.bank.items.length === 0) break;
      this.phase('plan', round);
      let draft;
      try {
        draft = await this.roles.plan(
          { brief, evidence: [...this.bank.items], round, maxRounds: this.maxPlanningRounds },
          this.roleContext(this.writingSignal()),
        );
      } catch (error) {
        if (this.isCancelled()) throw error;
        planFailure = errorText(error);
        if (DatalystError.isInstance(error)) this.failure = error;
        break;
      }
      const numbered = numberSections(draft, new Set(this.bank.items.map((item) => item.id)));
      if (numbered.length === 0) {
        planFailure = 'The planner wrote no section.';
        break;
      }
      sections = numbered;
      const gaps = round < this.maxPlanningRounds && this.stopReason === null ? draft.gaps : [];
      this.record.outline = { sections, rounds: round };
      this.emit({ type: 'outline-end', outline: this.record.outline, gaps: gaps.length });
      this.save();
      if (gaps.length === 0) break;
      const started = await this.runResearch(brief, gaps, round);
      if (started === 0) break;
      sections = null;
    }
    if (this.isCancelled()) return this.stoppedEnding();

    if (this.bank.items.length === 0) {
      if (this.stopReason !== null)
        return this.stoppedEnding(' Nothing had been found by then, so there is nothing to write.');
      return { reason: 'failed', detail: 'No sub-analysis produced evidence, so there is nothing to write.' };
    }
    const fallback = sections === null;
    if (sections === null) {
      // The planner failed (or never ran): the evidence is still shown, one section per sub-analysis.
      sections = fallbackSections(this.record.subAnalyses);
      this.record.outline = { sections, rounds: Math.max(1, rounds) };
      this.emit({ type: 'outline-end', outline: this.record.outline, gaps: 0 });
      this.save();
    }
    this.phase('write', rounds);
    await this.writeSections(
      brief,
      sections,
      fallback ? (planFailure ?? 'The planner gave no outline.') : null,
    );
    if (this.isCancelled()) return this.stoppedEnding();
    if (this.stopReason !== null) {
      return this.stoppedEnding(
        planFailure === null ? '' : ` The planner failed (${planFailure}): the sections list the evidence.`,
      );
    }
    if (planFailure !== null) {
      return {
        reason: 'failed',
        detail: `The planner failed (${planFailure}); the sections list the evidence by sub-analysis instead.`,
      };
    }
    if (this.budgetSpent) {
      return {
        reason: 'max-sub-analyses',
        detail: `The budget of ${this.maxSubAnalyses} sub-analyses was spent; the report was written from them.`,
      };
    }
    return {
      reason: 'answered',
      detail: `${sections.length} section${sections.length === 1 ? '' : 's'} written from ${this.bank.items.length} evidence items.`,
    };
  }

  /** Numbers and runs sub-questions, `concurrency` at once; those past the budget are recorded as skipped. Returns how many started. */
  private async runResearch(
    brief: Brief,
    drafts: readonly SubQuestionDraft[],
    round: number,
  ): Promise<number> {
    this.phase('research', round);
    const queued: Promise<Findings | null>[] = [];
    let started = 0;
    for (const draft of drafts) {
      const subQuestion: SubQuestion = {
        id: `S${this.record.subAnalyses.length + 1}`,
        question: draft.question,
        tables: draft.tables,
        round,
      };
      const record: SubAnalysisRecord = {
        ...subQuestion,
        outcome: 'skipped',
        termination: null,
        detail: '',
        runDir: null,
        startedAt: null,
        endedAt: null,
        answer: null,
        evidenceIds: [],
      };
      this.record.subAnalyses.push(record);
      if (this.subAnalysesStarted >= this.maxSubAnalyses) {
        this.budgetSpent = true;
        record.detail = `Not run: the budget of ${this.maxSubAnalyses} sub-analyses was spent.`;
        this.emit({ type: 'sub-analysis-end', record: { ...record } });
        continue;
      }
      this.subAnalysesStarted += 1;
      started += 1;
      const task = this.limit(() => this.runSubAnalysis(brief, subQuestion, record));
      this.running.add(task);
      void task.finally(() => this.running.delete(task));
      queued.push(task);
    }
    this.save();
    // No more sessions will be wanted once the budget's are handed out: the pool then stops starting kernels.
    if (this.subAnalysesStarted >= this.maxSubAnalyses) this.sessions.closePoolAfter(this.maxSubAnalyses);
    // Banked in the order of the sub-questions, not of their ends: evidence ids do not depend on which was faster.
    for (const settled of await Promise.allSettled(queued)) {
      if (settled.status === 'fulfilled' && settled.value !== null) this.bankFindings(settled.value);
    }
    this.save();
    return started;
  }

  private bankFindings({ record, drafts, executions }: Findings): void {
    const banked = this.bank.add(record.id, drafts, executions);
    record.evidenceIds = banked.items.map((item) => item.id);
    this.record.evidence = [...this.bank.items];
    this.emit({
      type: 'evidence-added',
      subAnalysisId: record.id,
      items: banked.items,
      dropped: banked.dropped,
    });
    if (banked.dropped.length > 0) {
      const count = banked.dropped.length;
      this.emit({
        type: 'deep-notice',
        text: `${record.id}: ${count} citation${count === 1 ? '' : 's'} named no output of its trace and ${count === 1 ? 'was' : 'were'} dropped (${banked.dropped.slice(0, 5).join(', ')}).`,
      });
    }
  }

  /** Runs one sub-analysis in a thread of its own and compresses its findings; the thread is closed when it ends. */
  private async runSubAnalysis(
    brief: Brief,
    subQuestion: SubQuestion,
    record: SubAnalysisRecord,
  ): Promise<Findings | null> {
    if (this.research.signal.aborted) {
      record.detail = `Not run: ${this.isCancelled() ? 'the run was cancelled' : `the run's ${this.stopReason ?? 'limit'} came first`}.`;
      this.emit({ type: 'sub-analysis-end', record: { ...record } });
      this.save();
      return null;
    }
    record.runDir = `sub/${subQuestion.id}`;
    record.startedAt = nowIso();
    this.emit({ type: 'sub-analysis-start', subQuestion, runDir: path.join(this.outDir, record.runDir) });
    this.save();
    let thread: Thread | null = null;
    let findings: Findings | null = null;
    try {
      thread = await openThread(this.threadOptions(subQuestion));
      const result = await thread.ask(subAnalysisInstruction(subQuestion, brief), {
        signal: this.research.signal,
      }).result;
      this.addUsage(result.usage);
      const { outcome, detail } = outcomeOf(result, this.stopReason);
      record.outcome = outcome;
      record.detail = detail;
      record.termination = result.termination.reason;
      record.answer = result.answer;
      if (outcome === 'answered' || outcome === 'incomplete') {
        // What it found is compressed even when the deadline or token budget has come meanwhile:
        // the forced report is written from it (only a cancel, or the report's own time, stops it).
        const signal = this.writingSignal();
        const asked = thread;
        const drafts = await this.roles.compress(
          {
            subQuestion,
            result,
            executions: await readExecutions(thread.outDir),
            askFollowUp: (question) => asked.ask(question, { signal }).result,
          },
          this.roleContext(signal),
        );
        // Follow-ups may have run cells too: ground against everything the sub-analysis printed.
        findings = { record, drafts, executions: await readExecutions(thread.outDir) };
      }
    } catch (error) {
      findings = null;
      if (this.isCancelled()) {
        record.outcome = 'cancelled';
        record.detail = this.stoppedSubDetail();
      } else {
        record.outcome = 'failed';
        record.detail =
          record.termination === null
            ? `It could not run: ${errorText(error)}`
            : `It ended ${record.termination}, but compressing its findings failed: ${errorText(error)}`;
      }
    } finally {
      // Its sandbox is released as soon as it ends (not at the end of the run).
      if (thread !== null) await thread.close().catch(() => undefined);
      record.endedAt = nowIso();
      this.emit({ type: 'sub-analysis-end', record: { ...record, evidenceIds: [...record.evidenceIds] } });
      this.save();
    }
    return findings;
  }

  private threadOptions(subQuestion: SubQuestion): ThreadOptions {
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
    } = this.options;
    return {
      ...loopOptions,
      model: this.roles.subAnalystModel(subQuestion),
      workspaceDir: this.options.workspaceDir,
      outDir: path.join(this.outDir, 'sub', subQuestion.id),
      runId: `${this.runId}-${subQuestion.id}`,
      createSandbox: this.sessions.factory,
      // Nobody is there to answer a sub-analyst's question: it gets the fixed reply and goes on.
      askMode: 'reply',
    };
  }

  private async writeSections(
    brief: Brief,
    sections: readonly OutlineSection[],
    failure: string | null,
  ): Promise<void> {
    const written = await Promise.all(
      sections.map((section) => this.limit(() => this.writeSection(brief, section, failure))),
    );
    this.record.sections = written;
    this.save();
  }

  private async writeSection(
    brief: Brief,
    section: OutlineSection,
    failure: string | null,
  ): Promise<WrittenSection> {
    const evidence = this.bank.select(section.evidenceIds);
    const outputs = [...new Set(evidence.flatMap((item) => item.outputs))];
    let written: WrittenSection;
    if (failure === null && this.stopReason !== 'cancelled') {
      try {
        const markdown = await this.roles.write(
          { brief, section, evidence },
          this.roleContext(this.writingSignal()),
        );
        const checked = checkCitations(markdown, new Set(section.evidenceIds));
        written = {
          id: section.id,
          title: section.title,
          markdown: checked.markdown,
          citedEvidenceIds: checked.cited,
          numbers: this.bank.ground(checked.markdown, outputs),
          error: null,
        };
      } catch (error) {
        written = this.listedSection(section, evidence, `The writer failed: ${errorText(error)}`);
      }
    } else {
      written = this.listedSection(
        section,
        evidence,
        failure ?? 'The run was cancelled before this section was written.',
      );
    }
    this.emit({ type: 'section-end', section: written });
    return written;
  }

  private listedSection(
    section: OutlineSection,
    evidence: ReturnType<EvidenceBank['select']>,
    error: string,
  ): WrittenSection {
    const markdown = evidenceListing(evidence);
    return {
      id: section.id,
      title: section.title,
      markdown,
      citedEvidenceIds: evidence.map((item) => item.id),
      numbers: this.bank.ground(markdown, [...new Set(evidence.flatMap((item) => item.outputs))]),
      error,
    };
  }

  /** Research stops; the rest of the run writes from what exists, within `finalReportMs` (a cancel stops everything). */
  private stop(reason: StopReason, detail: string): void {
    if (reason === 'cancelled') {
      this.cancel.abort(new CancelledError(this.options.signal?.reason));
      this.finalReport.abort(new CancelledError(this.options.signal?.reason));
    }
    if (this.stopReason !== null && !(reason === 'cancelled' && this.stopReason !== 'cancelled')) return;
    this.stopReason = reason;
    this.stopDetail = detail;
    this.emit({ type: 'deep-notice', text: detail });
    this.research.abort(new CancelledError(new Error(detail)));
    if (reason !== 'cancelled') {
      const graceMs = this.options.finalReportMs ?? 120_000;
      const timer = setTimeout(
        () =>
          this.finalReport.abort(
            new CancelledError(new Error(`The forced final report took longer than ${graceMs} ms.`)),
          ),
        graceMs,
      );
      timer.unref();
      this.timers.push(timer);
    }
  }

  /** Outline and sections: stopped only by a cancel, or by the forced report's own time limit. */
  private writingSignal(): AbortSignal {
    return this.finalReport.signal;
  }

  /** A method, not a field read: the stop reason changes while a phase awaits. */
  private isCancelled(): boolean {
    return this.stopReason === 'cancelled';
  }

  private stoppedSubDetail(): string {
    return stoppedSubDetail(this.stopReason);
  }

  private stoppedEnding(extra = ''): DeepRecord['termination'] {
    const reason: DeepTerminationReason = this.stopReason ?? 'cancelled';
    const written = this.record.sections.length;
    const what =
      reason === 'cancelled'
        ? ''
        : ` ${written} section${written === 1 ? '' : 's'} written from ${this.bank.items.length} evidence items.`;
    return { reason, detail: `${this.stopDetail}${what}${extra}`.trim() };
  }

  private endingFor(error: unknown): DeepRecord['termination'] {
    if (this.stopReason !== null) return this.stoppedEnding(` (${errorText(error)})`);
    if (DatalystError.isInstance(error)) this.failure = error;
    return { reason: 'failed', detail: errorText(error) };
  }

  private roleContext(signal: AbortSignal): RoleContext {
    return { signal, onUsage: (usage) => this.addUsage(usage) };
  }

  private addUsage(usage: { promptTokens: number; completionTokens: number }): void {
    this.record.usage.promptTokens += usage.promptTokens;
    this.record.usage.completionTokens += usage.completionTokens;
    const budget = this.options.tokenBudget ?? null;
    const spent = this.record.usage.promptTokens + this.record.usage.completionTokens;
    if (budget !== null && spent >= budget && this.stopReason === null) {
      this.stop(
        'token-budget',
        `The run spent its token budget (${spent} of ${budget}); the report was written from what was found by then.`,
      );
    }
  }

  private phase(phase: DeepPhase, round: number): void {
    this.emit({ type: 'phase-start', phase, round });
  }

  private emit(event: DeepEvent): void {
    try {
      this.emitEvent(event);
    } catch {
      // A listener's failure is not the run's.
    }
  }

  /** deep.json as it stands, written in order (a crash keeps what was done). */
  private save(): void {
    const snapshot = structuredClone({ ...this.record, evidence: [...this.bank.items] });
    this.saving = this.saving
      .then(() => writeDeepRecord(this.outDir, snapshot))
      .catch((error: unknown) =>
        this.emit({ type: 'deep-notice', text: `deep.json could not be written: ${errorText(error)}` }),
      );
  }

  private async claimFolder(): Promise<void> {
    const existing = await stat(path.join(this.outDir, DEEP_RECORD_FILE)).then(
      () => true,
      () => false,
    );
    if (existing) {
      throw new ConfigError(
        `The folder ${this.outDir} already holds a deep run.`,
        'Pass a new or empty folder as the run folder.',
      );
    }
    await mkdir(this.outDir, { recursive: true });
  }
}

/**
 * A deep analysis: scope → supervise → parallel sub-analyses (each an
 * ordinary thread in its own sandbox session) → evidence bank → outline
 * (which may send sub-analysts after gaps) → sections, each written from
 * only the evidence it cites. Everything lands in the run folder as it goes:
 * `deep.json` and one ordinary run folder per sub-analysis under `sub/`.
 * Never throws for what happens during the run: the result's termination
 * names how it ended (a failed sub-analysis is recorded, the run goes on).
 * Throws only when the run cannot begin: ConfigError for a folder that
 * already holds a deep run, or for the offline analyst without offline roles.
 */
export async function deepAnalyze(options: DeepAnalyzeOptions): Promise<DeepAnalysisResult> {
  const run = new DeepRun(options, (event) => options.onEvent?.(event));
  return run.run();
}

/** The streaming form of `deepAnalyze`: its events as they happen, ending with `deep-end`. Breaking out cancels the run. */
export async function* streamDeepAnalysis(
  options: DeepAnalyzeOptions,
): AsyncGenerator<DeepEvent, void, undefined> {
  const queue: DeepEvent[] = [];
  let wake: (() => void) | null = null;
  let finished = false;
  let failure: unknown = null;
  const cancel = new AbortController();
  const signal =
    options.signal === undefined ? cancel.signal : AbortSignal.any([options.signal, cancel.signal]);
  const done = deepAnalyze({
    ...options,
    signal,
    onEvent: (event) => {
      options.onEvent?.(event);
      queue.push(event);
      wake?.();
    },
  }).then(
    () => {
      finished = true;
      wake?.();
    },
    (error: unknown) => {
      failure = error;
      finished = true;
      wake?.();
    },
  );
  try {
    for (;;) {
      const event = queue.shift();
      if (event !== undefined) {
        yield event;
        continue;
      }
      if (finished) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = null;
    }
    if (failure !== null) throw failure;
  } finally {
    if (!finished) cancel.abort(new CancelledError(new Error('The caller stopped reading the deep run.')));
    await done;
  }
}
