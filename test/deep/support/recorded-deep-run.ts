import { cp, mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TurnResult } from '../../../src/agent/index.ts';
import type { DeepRecord, SubAnalysisRecord, SubQuestion, WrittenSection } from '../../../src/deep/index.ts';
import {
  checkCitations,
  createOfflineDeepRoles,
  DEEP_RECORD_VERSION,
  EvidenceBank,
  numberSections,
  subAnalysisOutcome,
  writeDeepRecord,
} from '../../../src/deep/index.ts';
import type { WorkspaceProfile } from '../../../src/sandbox/index.ts';
import type { ExecutionRecord, TraceRecord } from '../../../src/trace/index.ts';
import { readTrace } from '../../../src/trace/index.ts';

/**
 * A deep run folder built without Docker from recorded sub-analyses: the
 * four sub-runs of an offline deep run on the student-loan example (made by
 * `record-fixture.ts` with `deepAnalyze`, figures shrunk by `trim-sub-trace.ts`), copied to
 * `sub/S1`…, and `deep.json` written from the offline roles' outputs on them through the
 * engine's own pieces (its evidence bank, outline numbering, citation check and
 * sub-analysis outcome), in the order the engine runs them.
 */
export const recordedSubRunsDir = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../fixtures/deep/student-loan',
);

export interface RecordedSubRun {
  id: string;
  records: TraceRecord[];
  executions: ExecutionRecord[];
  profile: WorkspaceProfile;
  question: string;
  turn: TurnResult;
}

export async function loadRecordedSubRuns(): Promise<RecordedSubRun[]> {
  const ids = (await readdir(recordedSubRunsDir)).filter((name) => /^S\d+$/.test(name)).sort();
  return Promise.all(
    ids.map(async (id) => {
      const { records } = await readTrace(path.join(recordedSubRunsDir, id, 'trace.jsonl'));
      const executions = records.filter((record): record is ExecutionRecord => record.type === 'execution');
      const profile = records.find((record) => record.type === 'workspace-profile');
      const start = records.find((record) => record.type === 'turn-start');
      const end = records.find((record) => record.type === 'turn-end');
      if (profile?.type !== 'workspace-profile' || start?.type !== 'turn-start' || end?.type !== 'turn-end')
        throw new Error(`The recorded sub-run ${id} lacks its profile or turn records.`);
      const turn: TurnResult = {
        turn: end.turn,
        question: start.question,
        answer: end.answer,
        ask: end.ask,
        termination: end.termination,
        rounds: end.rounds,
        usage: end.usage,
        durationMs: end.durationMs,
        outputIds: executions.map((execution) => execution.outputId),
        artifacts: [],
      };
      return { id, records, executions, profile: profile.profile, question: start.question, turn };
    }),
  );
}

/** Writes a deep run folder at `outDir` from the recorded sub-runs; `edit` may change the record before it is written (hostile text). */
export async function buildRecordedDeepRun(
  outDir: string,
  edit: (record: DeepRecord) => DeepRecord = (record) => record,
): Promise<DeepRecord> {
  const recorded = await loadRecordedSubRuns();
  const roles = createOfflineDeepRoles({ maxSubAnalyses: recorded.length });
  const context = { signal: new AbortController().signal, onUsage: () => undefined };
  const question = 'Generate a data science report.';
  const profile = recorded[0]?.profile;
  if (profile === undefined) throw new Error('No recorded sub-runs.');
  const scoped = await roles.scope({ question, profile, mayAsk: false }, context);
  if (!('brief' in scoped)) throw new Error('The offline scope never asks.');
  const drafts = await roles.supervise(
    { brief: scoped.brief, profile, maxSubAnalyses: recorded.length },
    context,
  );
  await mkdir(path.join(outDir, 'sub'), { recursive: true });
  for (const run of recorded)
    await cp(path.join(recordedSubRunsDir, run.id), path.join(outDir, 'sub', run.id), { recursive: true });

  // Research: each recorded sub-run as the engine records it, compressed and banked in the order of the sub-questions.
  const bank = new EvidenceBank();
  const subAnalyses: SubAnalysisRecord[] = [];
  for (const [index, draft] of drafts.entries()) {
    const run = recorded[index];
    if (run === undefined || run.question !== draft.question)
      throw new Error(`The recorded sub-run ${index + 1} answers another question than the brief's.`);
    const subQuestion: SubQuestion = { id: run.id, round: 0, ...draft };
    const at = (type: 'turn-start' | 'turn-end'): string => {
      const record = run.records.find((entry) => entry.type === type);
      return record !== undefined && 'at' in record ? record.at : '2026-01-01T00:00:00.000Z';
    };
    const { outcome, detail } = subAnalysisOutcome(run.turn, null);
    const evidenceDrafts = await roles.compress(
      {
        subQuestion,
        result: run.turn,
        executions: run.executions,
        askFollowUp: () => Promise.reject(new Error('The offline roles ask no follow-up.')),
      },
      context,
    );
    const banked = bank.add(subQuestion.id, evidenceDrafts, run.executions);
    if (banked.dropped.length > 0)
      throw new Error(`${subQuestion.id}: citations that resolve nowhere: ${banked.dropped.join(', ')}`);
    subAnalyses.push({
      ...subQuestion,
      outcome,
      termination: run.turn.termination.reason,
      detail,
      runDir: `sub/${subQuestion.id}`,
      startedAt: at('turn-start'),
      endedAt: at('turn-end'),
      answer: run.turn.answer,
      evidenceIds: banked.items.map((item) => item.id),
    });
  }

  // Outline and sections, as the engine's planning round and writers make them.
  const evidence = [...bank.items];
  const outline = await roles.plan({ brief: scoped.brief, evidence, round: 1, maxRounds: 1 }, context);
  const sections = numberSections(outline, new Set(evidence.map((item) => item.id)));
  const written: WrittenSection[] = [];
  for (const section of sections) {
    const given = bank.select(section.evidenceIds);
    const markdown = await roles.write({ brief: scoped.brief, section, evidence: given }, context);
    const checked = checkCitations(markdown, new Set(section.evidenceIds));
    written.push({
      id: section.id,
      title: section.title,
      markdown: checked.markdown,
      citedEvidenceIds: checked.cited,
      numbers: bank.ground(checked.markdown, [...new Set(given.flatMap((item) => item.outputs))]),
      error: null,
    });
  }

  // The summary, as the engine writes it after the sections.
  const summary = await roles.summarize?.({ brief: scoped.brief, evidence, sections }, context);

  const record: DeepRecord = {
    type: 'deep-analysis',
    version: DEEP_RECORD_VERSION,
    runId: 'recorded-student-loan',
    question,
    startedAt: subAnalyses[0]?.startedAt ?? '2026-01-01T00:00:00.000Z',
    endedAt: subAnalyses.at(-1)?.endedAt ?? '2026-01-01T00:00:00.000Z',
    model: { id: roles.modelId, offline: roles.offline },
    concurrency: 2,
    brief: scoped.brief,
    ask: null,
    subAnalyses,
    evidence,
    outline: { sections, rounds: 1 },
    sections: written,
    ...(summary === undefined
      ? {}
      : {
          summary: {
            ...summary,
            keyFindings: checkCitations(summary.keyFindings, new Set(evidence.map((item) => item.id)))
              .markdown,
          },
        }),
    termination: {
      reason: 'answered',
      detail: `${written.length} sections written from ${evidence.length} evidence items.`,
    },
    usage: { promptTokens: 0, completionTokens: 0 },
  };
  const edited = edit(record);
  await writeDeepRecord(outDir, edited);
  return edited;
}
