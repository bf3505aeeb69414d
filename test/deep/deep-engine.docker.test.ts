import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import { createOpenAIChatModel } from '../../src/agent/index.ts';
import { deepAnalyze, readDeepRecord, type DeepEvent, type DeepRecord } from '../../src/deep/index.ts';
import { notebookSchema, renderDeepRunFolder } from '../../src/report/index.ts';
import { containerLabels } from '../../src/sandbox/index.ts';
import { readTrace, type ExecutionRecord } from '../../src/trace/index.ts';
import {
  startFakeOpenAIServer,
  type FakeOpenAIServer,
  type RecordedRequest,
} from '../support/fake-openai-server.ts';
import {
  answerReply,
  codeReply,
  deepScript,
  deepWorkspace,
  evidenceInRequest,
  json,
  lastUserMessage,
  roleOf,
  text,
  type DeepScript,
} from './support/scripted-deep-model.ts';
import { useTempDirs } from '../support/temp-dirs.ts';

/**
 * The deep engine through real sandboxes (the run's own warm pool) and a
 * scripted model over real HTTP: parallel sub-analyses, a failing one, the
 * evidence bank's citations, writers that see only their section's evidence,
 * the deadline's forced report and a cancel that leaves no container.
 */

const tempDirs = useTempDirs();

async function containersOfThisProcess(): Promise<string[]> {
  const containers = await new Docker().listContainers({
    all: true,
    filters: {
      label: [`${containerLabels.ownerPid}=${process.pid}`, `${containerLabels.ownerHost}=${hostname()}`],
    },
  });
  return containers.map((container) => container.Labels[containerLabels.session] ?? '?');
}

const model = (server: FakeOpenAIServer) =>
  createOpenAIChatModel({ baseUrl: server.baseUrl, model: 'fake-model', retry: { maxRetries: 0 } });

const revenueAnalyst = {
  match: 'revenue by region',
  turns: [
    codeReply(
      "import pandas as pd\nsales = pd.read_csv('sales.csv')\nprint(sales.groupby('region')['revenue'].sum().to_dict())",
    ),
    answerReply('North 2241.0, South 1442.5.'),
  ],
  compress: json({
    evidence: [{ claim: 'North brought 2,241 in revenue and South 1,442.5.', outputs: ['E1'], figures: [] }],
  }),
};

const costsAnalyst = {
  match: 'costs',
  turns: [
    codeReply(
      "import pandas as pd\nimport matplotlib.pyplot as plt\ncosts = pd.read_csv('costs.csv')\ncosts.plot.bar(x='item', y='cost')\nplt.show()\nprint(costs['cost'].sum(), costs['cost'].max())",
    ),
    answerReply('Costs total 4665.5; staff is the largest at 2750.'),
  ],
  compress: json({
    evidence: [
      // E7 does not exist: the bank drops that citation.
      {
        claim: 'Costs total 4,665.5; staff is the largest at 2,750.',
        outputs: ['E1', 'E7'],
        figures: ['E1#figure0'],
      },
      // 1,234 was never printed: kept, flagged unverified.
      { claim: 'Rent is 1,234 a month.', outputs: ['E1'], figures: [] },
    ],
  }),
};

function sectionsPlan(request: RecordedRequest) {
  const evidence = evidenceInRequest(request);
  const idOf = (phrase: string) =>
    evidence.filter((item) => item.claim.includes(phrase)).map((item) => item.id);
  return json({
    sections: [
      { title: 'Revenue', purpose: 'Revenue by region.', evidenceIds: idOf('revenue') },
      {
        title: 'Costs',
        purpose: 'What the costs are.',
        evidenceIds: [...idOf('Costs total'), ...idOf('Rent')],
      },
    ],
    gaps: [],
  });
}

function sectionTitle(request: RecordedRequest): string {
  return /^Section: (.*)$/m.exec(lastUserMessage(request))?.[1] ?? '';
}

/** Every citation in the record resolves: evidence ids, cited outputs in the sub-traces, figures. */
async function expectCitationsResolve(runDir: string, record: DeepRecord): Promise<void> {
  const evidenceIds = new Set(record.evidence.map((item) => item.id));
  for (const section of record.outline?.sections ?? [])
    for (const id of section.evidenceIds) expect(evidenceIds).toContain(id);
  for (const section of record.sections) {
    const outlined = record.outline?.sections.find((candidate) => candidate.id === section.id);
    expect(outlined).toBeDefined();
    for (const id of section.citedEvidenceIds) expect(outlined?.evidenceIds).toContain(id);
    for (const match of section.markdown.matchAll(/\[(EV\d+)\]/g))
      expect(outlined?.evidenceIds).toContain(match[1]);
  }
  for (const sub of record.subAnalyses) for (const id of sub.evidenceIds) expect(evidenceIds).toContain(id);
  const executions = new Map<string, ExecutionRecord[]>();
  for (const sub of record.subAnalyses) {
    if (sub.runDir === null) continue;
    const trace = await readTrace(path.join(runDir, sub.runDir, 'trace.jsonl'));
    executions.set(
      sub.id,
      trace.records.filter((item): item is ExecutionRecord => item.type === 'execution'),
    );
  }
  for (const item of record.evidence) {
    for (const cited of item.outputs) {
      const [subId, outputId] = cited.split(':');
      expect(executions.get(subId ?? '')?.some((execution) => execution.outputId === outputId)).toBe(true);
    }
    for (const figure of item.figures) {
      const match = /^(S\d+):(E\d+)#(figure|chart)(\d+)$/.exec(figure);
      const execution = executions
        .get(match?.[1] ?? '')
        ?.find((candidate) => candidate.outputId === match?.[2]);
      const list = match?.[3] === 'figure' ? execution?.result.figures : execution?.result.charts;
      expect(list?.[Number(match?.[4])]).toBeDefined();
    }
    for (const number of item.numbers)
      if (number.output !== null) expect(item.outputs).toContain(number.output);
  }
}

describe('deep analysis through real sandboxes', () => {
  it('runs sub-analyses at once, reports the failing one, writes sections from their own evidence only', async () => {
    let costsCellRan: () => void = () => undefined;
    const costsRan = new Promise<void>((resolve) => {
      costsCellRan = resolve;
    });
    const script: DeepScript = {
      subQuestions: [
        { question: 'What is the revenue by region?', tables: ['sales.csv'] },
        { question: 'What do the costs add up to?', tables: ['costs.csv'] },
        { question: 'Which broken thing happens?', tables: [] },
      ],
      subAnalysts: [
        // S1 answers only once S2 has run its cell: both sessions are open at once, whatever the load.
        {
          ...revenueAnalyst,
          turns: [
            revenueAnalyst.turns[0] ?? text(''),
            text('<Answer>North 2241.0, South 1442.5.</Answer>', { waitFor: () => costsRan }),
          ],
        },
        {
          ...costsAnalyst,
          turns: [
            costsAnalyst.turns[0] ?? text(''),
            () => {
              costsCellRan();
              return costsAnalyst.turns[1] ?? text('');
            },
          ],
        },
        { match: 'broken thing', turns: [{ type: 'error', status: 500, message: 'scripted to break' }] },
      ],
      plan: sectionsPlan,
      write: (request) =>
        sectionTitle(request) === 'Revenue'
          ? text(
              `<Answer>North leads with 2,241 ${evidenceInWrite(request)
                .map((id) => `[${id}]`)
                .join('')}, South has 1,442.5. See also [EV99].</Answer>`,
            )
          : text('<Answer></Answer>'),
    };
    const server = await startFakeOpenAIServer({ script: [], whenExhausted: { type: 'error', status: 500 } });
    // Every request is answered by what it is (the order depends on which sub-analysis is faster).
    for (let index = 0; index < 40; index += 1) server.enqueue(deepScript(script));
    const outDir = path.join(await tempDirs.make('datalyst-deep-runs-'), 'deep');
    const events: DeepEvent[] = [];
    try {
      const result = await deepAnalyze({
        instruction: 'Generate a report on revenue and costs.',
        workspaceDir: await deepWorkspace(),
        model: model(server),
        outDir,
        concurrency: 2,
        maxSubAnalyses: 3,
        maxRounds: 4,
        onEvent: (event) => events.push(event),
      });
      expect(result.termination.reason).toBe('answered');
      const record = await readDeepRecord(outDir);
      if (record === null) throw new Error('no deep.json');
      expect(record.termination.reason).toBe('answered');
      expect(record.brief?.questions).toHaveLength(3);

      // The failing sub-analysis is reported with its outcome; the others answered.
      const byId = new Map(record.subAnalyses.map((sub) => [sub.id, sub]));
      expect(byId.get('S1')).toMatchObject({ outcome: 'answered', runDir: 'sub/S1' });
      expect(byId.get('S2')).toMatchObject({ outcome: 'answered', runDir: 'sub/S2' });
      expect(byId.get('S3')).toMatchObject({
        outcome: 'failed',
        termination: 'model-unavailable',
        evidenceIds: [],
      });

      // S1 and S2 truly overlapped: each started before the other ended, in the record and in their traces.
      const s1 = byId.get('S1');
      const s2 = byId.get('S2');
      expect(Date.parse(s1?.startedAt ?? '')).toBeLessThan(Date.parse(s2?.endedAt ?? ''));
      expect(Date.parse(s2?.startedAt ?? '')).toBeLessThan(Date.parse(s1?.endedAt ?? ''));
      const traceSpan = async (id: string) => {
        const records = (await readTrace(path.join(outDir, 'sub', id, 'trace.jsonl'))).records;
        const start = records.find((item) => item.type === 'run-start');
        const end = records.find((item) => item.type === 'run-end');
        return {
          start: Date.parse(start?.type === 'run-start' ? start.startedAt : ''),
          end: Date.parse(end?.type === 'run-end' ? end.endedAt : ''),
        };
      };
      const [span1, span2] = [await traceSpan('S1'), await traceSpan('S2')];
      expect(span1.start).toBeLessThan(span2.end);
      expect(span2.start).toBeLessThan(span1.end);
      // And S2 ran a cell in its own container while S1's session was open.
      const s2Cell = (await readTrace(path.join(outDir, 'sub', 'S2', 'trace.jsonl'))).records.find(
        (item) => item.type === 'execution',
      );
      const s2CellAt = Date.parse(s2Cell?.type === 'execution' ? s2Cell.at : '');
      expect(s2CellAt).toBeGreaterThan(span1.start);
      expect(s2CellAt).toBeLessThan(span1.end);

      // Evidence: ids, namespaced outputs, a dropped citation, an unverified number flagged and kept.
      const revenue = record.evidence.find((item) => item.claim.includes('revenue'));
      const costs = record.evidence.find((item) => item.claim.includes('Costs total'));
      const rent = record.evidence.find((item) => item.claim.includes('Rent'));
      expect(revenue).toMatchObject({ subAnalysisId: 'S1', outputs: ['S1:E1'] });
      expect(revenue?.numbers.every((number) => number.verified)).toBe(true);
      expect(costs).toMatchObject({ subAnalysisId: 'S2', outputs: ['S2:E1'], figures: ['S2:E1#figure0'] });
      expect(costs?.numbers.map((number) => [number.text, number.verified])).toEqual([
        ['4,665.5', true],
        ['2,750', true],
      ]);
      expect(rent?.numbers).toEqual([{ text: '1,234', output: null, verified: false }]);
      expect(events.some((event) => event.type === 'evidence-added' && event.dropped.includes('E7'))).toBe(
        true,
      );

      // Each writer request held only its own section's evidence.
      const writes = server.completionRequests.filter((request) => roleOf(request) === 'write');
      const sectionEvidence = new Map(
        record.outline?.sections.map((section) => [section.title, section.evidenceIds]),
      );
      expect(writes.length).toBeGreaterThanOrEqual(2);
      for (const request of writes) {
        const title = sectionTitle(request);
        expect(evidenceInWrite(request).sort()).toEqual([...(sectionEvidence.get(title) ?? [])].sort());
        const others = record.evidence.filter(
          (item) => !(sectionEvidence.get(title) ?? []).includes(item.id),
        );
        for (const item of others) expect(lastUserMessage(request)).not.toContain(item.claim);
      }

      // The revenue section was written, its numbers grounded; a foreign citation is no citation.
      const [revenueSection, costsSection] = record.sections;
      expect(revenueSection).toMatchObject({
        title: 'Revenue',
        error: null,
        citedEvidenceIds: [revenue?.id],
      });
      expect(revenueSection?.markdown).toContain('EV99: not among this section');
      expect(revenueSection?.numbers.map((number) => number.verified)).toEqual([true, true]);
      // The costs writer failed (twice empty): the section lists its evidence instead.
      expect(costsSection?.error).toMatch(/write step failed/);
      expect(costsSection?.markdown).toContain(`[${costs?.id}]`);
      expect(costsSection?.markdown).toContain(`[${rent?.id}]`);

      await expectCitationsResolve(outDir, record);
      expect(await containersOfThisProcess()).toEqual([]);
      const kinds = events.map((event) => event.type);
      expect(kinds[0]).toBe('deep-start');
      expect(kinds.at(-1)).toBe('deep-end');
      expect(kinds.filter((kind) => kind === 'sub-analysis-start')).toHaveLength(3);
    } finally {
      await server.close();
    }
  });

  it('at the deadline, stops the running sub-analysis and writes a forced report from what exists', async () => {
    const script: DeepScript = {
      subQuestions: [
        { question: 'What is the revenue by region?', tables: ['sales.csv'] },
        { question: 'What do the costs add up to, slowly?', tables: ['costs.csv'] },
      ],
      subAnalysts: [
        {
          ...revenueAnalyst,
          turns: [revenueAnalyst.turns[0] ?? text(''), answerReply('North 2241.0, South 1442.5.')],
        },
        // Never answers: only the deadline ends it.
        { match: 'slowly', turns: [{ type: 'hang' }] },
      ],
      plan: (request) => {
        const evidence = evidenceInRequest(request);
        return json({
          sections: [{ title: 'Revenue', purpose: 'Revenue.', evidenceIds: evidence.map((item) => item.id) }],
          // Ignored: past the deadline no more research starts.
          gaps: [{ question: 'One more thing?', tables: [] }],
        });
      },
      write: (request) =>
        text(`<Answer>North leads with 2,241 [${evidenceInWrite(request)[0] ?? ''}].</Answer>`),
    };
    const server = await startFakeOpenAIServer({ script: [] });
    for (let index = 0; index < 20; index += 1) server.enqueue(deepScript(script));
    const outDir = path.join(await tempDirs.make('datalyst-deep-deadline-'), 'deep');
    const events: DeepEvent[] = [];
    try {
      const result = await deepAnalyze({
        instruction: 'Revenue and costs.',
        workspaceDir: await deepWorkspace(),
        model: model(server),
        outDir,
        concurrency: 2,
        maxSubAnalyses: 4,
        // Long enough for the revenue analyst on a loaded machine; the other one hangs until it.
        deadlineMs: 25_000,
        onEvent: (event) => events.push(event),
      });
      expect(result.termination.reason).toBe('deadline');
      const record = await readDeepRecord(outDir);
      expect(record?.termination.reason).toBe('deadline');
      // Said as given, not as "25000 ms".
      expect(record?.termination.detail).toMatch(/^The run reached its deadline of 25 s;/);
      expect(record?.subAnalyses.map((sub) => [sub.id, sub.outcome])).toEqual([
        ['S1', 'answered'],
        ['S2', 'cancelled'],
      ]);
      expect(record?.subAnalyses[1]?.detail).toMatch(/deadline/);
      expect(record?.sections).toHaveLength(1);
      expect(record?.sections[0]).toMatchObject({ error: null, title: 'Revenue' });
      expect(record?.sections[0]?.markdown).toContain('2,241');
      if (record !== null) await expectCitationsResolve(outDir, record);
      expect(await containersOfThisProcess()).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it('a sub-analyst whose cell kills its kernel is recorded with its outcome, and the sections are still written', async () => {
    const script: DeepScript = {
      subQuestions: [
        { question: 'What is the revenue by region?', tables: ['sales.csv'] },
        { question: 'What do the costs add up to, crashing?', tables: ['costs.csv'] },
      ],
      subAnalysts: [
        revenueAnalyst,
        {
          match: 'crashing',
          turns: [
            codeReply("import os\nprint('about to exit', flush=True)\nos._exit(1)"),
            answerReply('The kernel died before the costs were summed.'),
          ],
          compress: json({ evidence: [] }),
        },
      ],
      plan: (request) =>
        json({
          sections: [
            {
              title: 'Revenue',
              purpose: 'Revenue.',
              evidenceIds: evidenceInRequest(request).map((item) => item.id),
            },
          ],
          gaps: [],
        }),
      write: (request) =>
        text(`<Answer>North leads with 2,241 [${evidenceInWrite(request)[0] ?? ''}].</Answer>`),
    };
    const server = await startFakeOpenAIServer({ script: [] });
    for (let index = 0; index < 20; index += 1) server.enqueue(deepScript(script));
    const outDir = path.join(await tempDirs.make('datalyst-deep-crash-'), 'deep');
    try {
      const result = await deepAnalyze({
        instruction: 'Revenue and costs.',
        workspaceDir: await deepWorkspace(),
        model: model(server),
        outDir,
        concurrency: 2,
        maxSubAnalyses: 2,
        maxRounds: 4,
      });
      const record = await readDeepRecord(outDir);
      if (record === null) throw new Error('no deep.json');
      const crashed = record.subAnalyses[1];
      // Its crashed cell is in its own trace, as a result.
      const executions = (await readTrace(path.join(outDir, 'sub', 'S2', 'trace.jsonl'))).records.filter(
        (item): item is ExecutionRecord => item.type === 'execution',
      );
      expect(executions[0]?.result.status).toBe('crashed');
      expect(crashed).toMatchObject(CRASHED_SUB_ANALYSIS);
      expect(crashed?.endedAt).not.toBeNull();
      expect(record.subAnalyses[0]).toMatchObject({ outcome: 'answered' });
      expect(result.termination.reason).toBe('answered');
      expect(record.sections).toHaveLength(1);
      expect(record.sections[0]).toMatchObject({ title: 'Revenue', error: null });
      expect(record.sections[0]?.markdown).toContain('2,241');
      await expectCitationsResolve(outDir, record);
      expect(await containersOfThisProcess()).toEqual([]);
      // The deep notebook keeps the crashed cell, tagged not to be run again.
      await renderDeepRunFolder(outDir, { formats: ['ipynb'] });
      const notebook = notebookSchema.parse(
        JSON.parse(await readFile(path.join(outDir, 'analysis.ipynb'), 'utf8')) as unknown,
      );
      expect(notebook.cells.find((cell) => cell.id === 'S2-E1')?.metadata.tags).toEqual(['skip-execution']);
    } finally {
      await server.close();
    }
  });

  it('a cancel closes every sub-analysis and leaves no container', async () => {
    const script: DeepScript = {
      subQuestions: [
        { question: 'Sleep over the revenue?', tables: ['sales.csv'] },
        { question: 'Sleep over the costs?', tables: ['costs.csv'] },
      ],
      subAnalysts: [
        { match: 'revenue', turns: [codeReply('import time\ntime.sleep(120)')] },
        { match: 'costs', turns: [codeReply('import time\ntime.sleep(120)')] },
      ],
      plan: sectionsPlan,
      write: () => answerReply('unused'),
    };
    const server = await startFakeOpenAIServer({ script: [] });
    for (let index = 0; index < 10; index += 1) server.enqueue(deepScript(script));
    const outDir = path.join(await tempDirs.make('datalyst-deep-cancel-'), 'deep');
    const controller = new AbortController();
    try {
      const running = deepAnalyze({
        instruction: 'Sleep.',
        workspaceDir: await deepWorkspace(),
        model: model(server),
        outDir,
        concurrency: 2,
        maxSubAnalyses: 2,
        signal: controller.signal,
      });
      // Both sub-analysts have sent their cell, and their containers run it.
      const subRequests = () =>
        server.completionRequests.filter((request) => roleOf(request) === 'sub-analyst').length;
      for (let waited = 0; subRequests() < 2 && waited < 120_000; waited += 100) await sleep(100);
      expect(subRequests()).toBe(2);
      await sleep(1500);
      expect((await containersOfThisProcess()).length).toBeGreaterThanOrEqual(2);
      controller.abort();
      const result = await running;
      expect(result.termination.reason).toBe('cancelled');
      const record = await readDeepRecord(outDir);
      expect(record?.termination.reason).toBe('cancelled');
      expect(record?.subAnalyses.map((sub) => sub.outcome)).toEqual(['cancelled', 'cancelled']);
      expect(record?.sections).toEqual([]);
      expect(await containersOfThisProcess()).toEqual([]);
    } finally {
      await server.close();
    }
  });
});

/** What the crash test expects of the sub-analysis whose kernel died. */
// A crashed cell is a result: the kernel is restarted and the sub-analyst goes on to answer, with nothing to cite.
const CRASHED_SUB_ANALYSIS = {
  id: 'S2',
  runDir: 'sub/S2',
  outcome: 'answered',
  termination: 'answered',
  answer: 'The kernel died before the costs were summed.',
  evidenceIds: [],
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The evidence ids a writer request lists. */
function evidenceInWrite(request: RecordedRequest): string[] {
  return [...lastUserMessage(request).matchAll(/^(EV\d+) \(from/gm)].map((match) => match[1] ?? '');
}
