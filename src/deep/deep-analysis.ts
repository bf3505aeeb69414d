import os from 'node:os';
import path from 'node:path';
import pLimit from 'p-limit';
import { claimRunFolder, newRunId, noDataDecision, withRunFolderLeftOut } from '../agent/index.ts';
import { assertDeepAnalyzeOptions } from './deep-options.ts';
import { CancelledError, DatalystError } from '../errors/index.ts';
import { profileInParts, type WorkspaceProfile } from '../sandbox/index.ts';
import { DEEP_RECORD_FILE, deepRecordText, writeDeepRecordSync } from './deep-record.ts';
import type { DeepAnalysisResult, DeepEvent, DeepPhase } from './deep-events.ts';
import type { DeepAnalyzeOptions } from './deep-options.ts';
import { checkCitations, evidenceListing, fallbackSections, numberSections } from './deep-outline.ts';
import type { DeepRoles, RoleContext, SubQuestionDraft } from './deep-roles.ts';
import {
  DEEP_RECORD_VERSION,
  type Brief,
  type DeepRecord,
  type DeepTerminationReason,
  type OutlineSection,
  type SubAnalysisRecord,
  type SubQuestion,
  type WrittenSection,
} from './deep-schema.ts';
import { EvidenceBank } from './evidence-bank.ts';
import { createOfflineDeepRoles } from './offline-roles.ts';
import { createModelDeepRoles } from './model-roles.ts';
import { SessionSource } from './session-source.ts';
import { durationText } from '../util/duration-text.ts';
import { runSubAnalysis, type Findings, type StopReason, type SubAnalysisHost } from './sub-analysis.ts';

const nowIso = () => new Date().toISOString();
const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** The roles when the caller gives none. */
function defaultRoles(options: DeepAnalyzeOptions): DeepRoles {
  // A fresh offline roles object per run: its planner reads notes its compress step made.
  if (options.model.offline === true)
    return createOfflineDeepRoles({ maxSubAnalyses: options.maxSubAnalyses ?? 4 });
  return createModelDeepRoles(options.model);
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
  private subAnalysesStarted = 0;
  private budgetSpent = false;
  private readonly running = new Set<Promise<unknown>>();
  /** Threads of ended sub-analyses still closing (their sandboxes going). */
  private readonly releasing = new Set<Promise<unknown>>();
  private failure: DatalystError | null = null;
  /** What each sub-analysis sees of the run. */
  private readonly subAnalysisHost: SubAnalysisHost;
  private workspaceProfile: WorkspaceProfile | null = null;

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
      owner: { pid: process.pid, host: os.hostname() },
      brief: null,
      ask: null,
      subAnalyses: [],
      evidence: [],
      outline: null,
      sections: [],
      termination: { reason: 'cancelled', detail: 'The run is still going (or its process died).' },
      usage: { promptTokens: 0, completionTokens: 0 },
    };
    this.subAnalysisHost = {
      options,
      roles: this.roles,
      runId: this.runId,
      outDir: this.outDir,
      workspaceProfile: () => this.workspaceProfile,
      createSandbox: this.sessions.factory,
      researchSignal: this.research.signal,
      writingSignal: () => this.writingSignal(),
      stopReason: () => this.stopReason,
      roleContext: (signal) => this.roleContext(signal),
      addUsage: (usage) => this.addUsage(usage),
      emit: (event) => this.emit(event),
      save: () => this.save(),
      release: (closing) => {
        this.releasing.add(closing);
        void closing.finally(() => this.releasing.delete(closing));
      },
    };
  }

  async run(): Promise<DeepAnalysisResult> {
    // Before anything else: a folder that already holds a deep run is refused, untouched.
    await this.claimFolder();
    // Only now: a refused run starts no kernel (the run's own pool starts one at once).
    this.sessions.warmUp();
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
              `The run reached its deadline of ${durationText(deadlineMs)}; the report was written from what was found by then.`,
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
      await Promise.allSettled([...this.releasing]);
      await this.sessions.close();
    }
    this.record.termination = termination;
    this.record.endedAt = nowIso();
    this.record.evidence = [...this.bank.items];
    this.save();
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
    // Profiled once, inside the sandbox, by as many sessions as will run at once, at most one per core (a
    // part of the files each: on a 2-core machine the profile was a sixth of a parallel run, all of it on
    // one core); those sessions then serve the first sub-analyses.
    this.phase('profile', 0);
    const count = Math.min(this.concurrency, this.maxSubAnalyses, os.availableParallelism());
    const sessions = await this.sessions.first(count, this.research.signal);
    const profile: WorkspaceProfile = await profileInParts(sessions, { signal: this.research.signal });
    this.workspaceProfile = profile;
    // Recorded now, not only in the sub-analyses' traces: a run stopped before any of them still names them.
    this.record.unreadableFiles = profile.files.flatMap((file) =>
      file.error === null ? [] : [{ path: file.path, error: file.error }],
    );
    this.save();
    this.emit({ type: 'profile-end', profile });
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
    // The budget, not the supervisor, left questions of the brief out: said, not silently dropped. Counted only
    // when each sub-question is one of the brief's (the offline roles); a model may merge or split them.
    const oneToOne = drafts.every((draft) =>
      brief.questions.some((entry) => entry.question === draft.question),
    );
    const unresearched =
      oneToOne && drafts.length >= this.maxSubAnalyses ? brief.questions.length - drafts.length : 0;
    const briefNote =
      unresearched > 0
        ? ` ${unresearched} of the brief's ${brief.questions.length} questions ${unresearched === 1 ? 'was' : 'were'} not researched: the budget is ${this.maxSubAnalyses} sub-analyses (--sub-analyses ${brief.questions.length} would research them all).`
        : '';
    if (briefNote !== '') this.emit({ type: 'deep-notice', text: briefNote.trim() });
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
    await this.summarize(brief, sections);
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
        detail: `The budget of ${this.maxSubAnalyses} sub-analyses was spent; the report was written from them.${briefNote}`,
      };
    }
    return {
      reason: 'answered',
      detail: `${sections.length} section${sections.length === 1 ? '' : 's'} written from ${this.bank.items.length} evidence items.${briefNote}`,
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
        record.skipReason = 'budget';
        this.emit({ type: 'sub-analysis-end', record: { ...record } });
        continue;
      }
      this.subAnalysesStarted += 1;
      started += 1;
      const task = this.limit(() => runSubAnalysis(this.subAnalysisHost, brief, subQuestion, record));
      this.running.add(task);
      void task.finally(() => this.running.delete(task));
      queued.push(task);
    }
    this.save();
    // No more sessions will be wanted once the budget's are handed out: the pool then stops starting kernels.
    if (this.subAnalysesStarted >= this.maxSubAnalyses) this.sessions.closePoolAfter(this.maxSubAnalyses);
    // Banked in the order of the sub-questions, not of their ends, so that evidence ids do not depend on
    // which was faster; but as soon as a sub-analysis and all those before it have ended, and saved then, so
    // that a run stopped at once (a second Ctrl-C, a kill) keeps on disk the evidence gathered so far.
    const ended: Array<{ findings: Findings | null } | undefined> = [];
    let banked = 0;
    const bankInOrder = () => {
      let added = false;
      for (let next = ended[banked]; next !== undefined; next = ended[banked]) {
        if (next.findings !== null) {
          this.bankFindings(next.findings);
          added = true;
        }
        banked += 1;
      }
      if (added) this.save();
    };
    await Promise.all(
      queued.map((task, index) =>
        task.then(
          (findings) => {
            ended[index] = { findings };
            bankInOrder();
          },
          () => {
            ended[index] = { findings: null };
            bankInOrder();
          },
        ),
      ),
    );
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

  /** The summary the report says first, when the roles write one; one that fails is said, not fatal. */
  private async summarize(brief: Brief, sections: readonly OutlineSection[]): Promise<void> {
    if (this.roles.summarize === undefined) return;
    try {
      const summary = await this.roles.summarize(
        { brief, evidence: [...this.bank.items], sections },
        this.roleContext(this.writingSignal()),
      );
      // Only the bank's evidence may be cited, as in a section.
      const checked = checkCitations(summary.keyFindings, new Set(this.bank.items.map((item) => item.id)));
      this.record.summary = { ...summary, keyFindings: checked.markdown };
      this.save();
    } catch (error) {
      if (this.isCancelled()) return;
      this.emit({ type: 'deep-notice', text: `The summary could not be written: ${errorText(error)}` });
    }
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
            new CancelledError(
              new Error(`The forced final report took longer than ${durationText(graceMs)}.`),
            ),
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

  /**
   * deep.json as it stands, written at once and atomically (synchronously: a process that exits at once
   * leaves the last complete record, never a temporary file), so a crash keeps what was done.
   */
  private save(): void {
    try {
      writeDeepRecordSync(this.outDir, { ...this.record, evidence: [...this.bank.items] });
    } catch (error) {
      this.emit({ type: 'deep-notice', text: `deep.json could not be written: ${errorText(error)}` });
    }
  }

  private async claimFolder(): Promise<void> {
    // A folder holding anything (a deep run, a user's files) is refused, untouched; of two runs started at
    // once on one folder, the one that creates deep.json first (exclusively) goes on, the other is refused.
    await claimRunFolder(this.outDir, DEEP_RECORD_FILE, deepRecordText(this.record));
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
 * holds anything (a deep run, or one that another run claimed first), or for
 * the offline analyst without offline roles.
 */
export async function deepAnalyze(options: DeepAnalyzeOptions): Promise<DeepAnalysisResult> {
  assertDeepAnalyzeOptions(options);
  const runId = options.runId ?? newRunId();
  const outDir = path.resolve(options.outDir ?? path.join(options.runsDir ?? 'runs', runId));
  // A run folder inside the workspace is not data: the profile, the sub-analyses' inputs and sessions leave it out.
  const runOptions = await withRunFolderLeftOut({ ...options, runId, outDir }, outDir);
  const run = new DeepRun(runOptions, (event) => options.onEvent?.(event));
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
