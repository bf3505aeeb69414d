import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatMessage, LanguageModel } from '../../src/agent/index.ts';
import { formatFirstMessage } from '../../src/agent/index.ts';
import { focusEntries } from '../../src/agent/offline-analyst/index.ts';
import type { Brief, DeepRecord, EvidenceItem, SubQuestion } from '../../src/deep/index.ts';
import type { WorkspaceProfile } from '../../src/sandbox/index.ts';
import type { ExecutionRecord } from '../../src/trace/index.ts';
import { createOfflineDeepRoles, readDeepRecord, subAnalysisInstruction } from '../../src/deep/index.ts';
import {
  buildNumberIndex,
  findNumberMentions,
  groundMention,
  groundingSources,
} from '../../src/trace/index.ts';
import { column, csvFile, unreadableFile } from '../offline-analyst/support/canned-conversation.ts';
import { buildRecordedDeepRun, loadRecordedSubRuns } from './support/recorded-deep-run.ts';
import type { RecordedSubRun } from './support/recorded-deep-run.ts';

/**
 * The offline deep roles on recorded sub-analyses of the student-loan example
 * (four real offline sub-runs, see test/fixtures/deep/student-loan): no
 * Docker, the same inputs always give the same outputs.
 */

const context = { signal: new AbortController().signal, onUsage: () => undefined };
let recorded: RecordedSubRun[] = [];
let root = '';

beforeAll(async () => {
  recorded = await loadRecordedSubRuns();
  root = await mkdtemp(path.join(os.tmpdir(), 'datalyst-deep-roles-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

function profile() {
  const first = recorded[0];
  if (first === undefined) throw new Error('no recorded sub-runs');
  return first.profile;
}

async function collect(model: LanguageModel, messages: ChatMessage[]): Promise<string> {
  let text = '';
  for await (const chunk of model.stream({ messages, stop: [] }))
    if (chunk.type === 'text-delta') text += chunk.text;
  return text;
}

function subQuestionOf(run: RecordedSubRun, tables: string[]): SubQuestion {
  return { id: run.id, question: run.question, tables, round: 0 };
}

describe('scope', () => {
  it('writes one question per theme, naming each table once (the CSV of the same data as Excel and SQLite)', async () => {
    const roles = createOfflineDeepRoles();
    const scoped = await roles.scope(
      { question: 'Generate a data science report.', profile: profile(), mayAsk: true },
      context,
    );
    if (!('brief' in scoped)) throw new Error('asked');
    const { brief } = scoped;
    expect(brief.question).toBe('Generate a data science report.');
    expect(brief.questions.map((entry) => entry.tables)).toEqual([
      [
        'bool.csv',
        'disabled.csv',
        'enlist.csv',
        'enrolled.csv',
        'filed_for_bankrupcy.csv',
        'longest_absense_from_school.csv',
        'male.csv',
        'no_payment_due.csv',
        'person.csv',
        'unemployed.csv',
      ],
      ['enrolled.csv'],
      ['longest_absense_from_school.csv'],
      ['no_payment_due.csv'],
      ['enlist.csv'],
      ['bool.csv', 'disabled.csv', 'filed_for_bankrupcy.csv', 'male.csv', 'person.csv', 'unemployed.csv'],
    ]);
    expect(brief.questions[0]?.question).toMatch(/^How do the tables that share a key column relate/);
    expect(brief.goodAnswer).not.toMatch(/\d/);
    // The same profile gives the same brief.
    expect(
      await createOfflineDeepRoles().scope(
        { question: 'Generate a data science report.', profile: profile(), mayAsk: true },
        context,
      ),
    ).toEqual(scoped);
  });

  it('asks one question about the files when no table could be read', async () => {
    const scoped = await createOfflineDeepRoles().scope(
      { question: 'What is here?', profile: { files: [], truncated: false }, mayAsk: false },
      context,
    );
    expect('brief' in scoped && scoped.brief.questions).toEqual([
      { question: 'What do the files of the workspace contain, and can they be read?', tables: [] },
    ]);
  });
});

describe('scope with files that could not be read', () => {
  // The mixed workspace a first-time user ran: a table, and three corrupt files the profile names with why.
  const mixed: WorkspaceProfile = {
    truncated: false,
    files: [
      unreadableFile('broken.json', 'json', 'Not valid JSON: expecting value at line 1, column 13'),
      unreadableFile('broken.sqlite', 'sqlite', 'DatabaseError: file is not a database'),
      csvFile('orders.csv', [column('region', 'category'), column('units', 'integer')]),
    ],
  };

  it('names each unreadable file in the brief (they vanished from it), its errors left to the list of them', async () => {
    const scoped = await createOfflineDeepRoles().scope(
      { question: 'Generate a data science report.', profile: mixed, mayAsk: false },
      context,
    );
    if (!('brief' in scoped)) throw new Error('asked');
    // The question embedded every file's error, right above the report's own list of them.
    expect(scoped.brief.questions.at(-1)).toEqual({
      question: 'Which files could not be read, and can a tolerant reader read them?',
      tables: ['broken.json', 'broken.sqlite'],
    });
    expect(scoped.brief.goodAnswer).toContain('each file that could not be read is named with why');
  });

  it('spends the budget on the tables first: the unreadable files stay in the brief when no sub-analysis is left', async () => {
    const tables = ['a', 'b', 'c', 'd'].map((name) =>
      csvFile(`${name}.csv`, [column(`${name}_x`, 'category'), column(`${name}_y`, 'integer')]),
    );
    const roles = createOfflineDeepRoles();
    const scoped = await roles.scope(
      {
        question: 'Report.',
        profile: { truncated: false, files: [...mixed.files, ...tables] },
        mayAsk: false,
      },
      context,
    );
    if (!('brief' in scoped)) throw new Error('asked');
    expect(scoped.brief.questions.at(-1)?.tables).toEqual(['broken.json', 'broken.sqlite']);
    const drafts = await roles.supervise({ brief: scoped.brief, profile: mixed, maxSubAnalyses: 4 }, context);
    // Four slots, five tables: every slot is a table's; the unreadable files wait for a fifth.
    expect(drafts.map((draft) => draft.tables)).toEqual([['a.csv'], ['b.csv'], ['c.csv'], ['d.csv']]);
  });
});

describe('the files that could not be read, said once', () => {
  // The mixed workspace's run: each sub-analysis's load cell prints the workspace's inventory, whichever
  // table it studies; S3 studies the unreadable files (the profile's reasons, then the tolerant reader's).
  const load = '# offline-analyst step: load\n';
  const fallback = '# offline-analyst step: load-fallback\n';
  const correlations = '# offline-analyst step: correlations\n';
  const holds = (other: string) =>
    `The workspace holds 5 files: 1 was read, 3 could not be read and 1 ${other}.`;
  const couldNot =
    'Could not be read: `broken.json` (not valid JSON); `broken.sqlite` (file is not a database).';
  const listed =
    'Every one of the 5 files is listed with its size and shape (or why it was not read) in `datalyst_inventory.csv`.';
  const inventory = [holds('is not one of the tables this part of the analysis studies'), couldNot, listed];
  const unreadableQuestion = 'Which files could not be read, and can a tolerant reader read them?';
  const brief: Brief = {
    question: 'Report.',
    questions: [{ question: unreadableQuestion, tables: ['broken.json', 'broken.sqlite'] }],
    goodAnswer: '',
  };

  function execution(outputId: string, code: string, findings: string[]): ExecutionRecord {
    const base = recorded[0]?.executions[0];
    if (base === undefined) throw new Error('no recorded sub-runs');
    return {
      ...base,
      outputId,
      code,
      result: {
        ...base.result,
        status: 'ok',
        stdout: {
          ...base.result.stdout,
          text: `Findings:\n${findings.map((line) => `- ${line}`).join('\n')}\n`,
        },
        figures: [],
        charts: [],
      },
    };
  }

  async function evidenceOf(
    roles: ReturnType<typeof createOfflineDeepRoles>,
    subs: [SubQuestion, ExecutionRecord[]][],
  ): Promise<EvidenceItem[]> {
    const turn = recorded[0]?.turn;
    if (turn === undefined) throw new Error('no recorded sub-runs');
    const evidence: EvidenceItem[] = [];
    for (const [subQuestion, executions] of subs) {
      const drafts = await roles.compress(
        { subQuestion, result: turn, executions, askFollowUp: () => Promise.reject(new Error('not asked')) },
        context,
      );
      for (const draft of drafts)
        evidence.push({
          id: `EV${evidence.length + 1}`,
          subAnalysisId: subQuestion.id,
          claim: draft.claim,
          numbers: [],
          outputs: draft.outputs,
          figures: [],
        });
    }
    return evidence;
  }

  const ragged = (id: string, findings: string[]): [SubQuestion, ExecutionRecord[]] => [
    { id, question: 'What does ragged.csv show: how?', tables: ['ragged.csv'], round: 0 },
    [execution('E1', load, findings)],
  ];
  const unreadable = (): [SubQuestion, ExecutionRecord[]] => [
    { id: 'S3', question: unreadableQuestion, tables: ['broken.json', 'broken.sqlite'], round: 0 },
    [
      execution('E1', load, [
        holds('are not among the tables this part of the analysis studies'),
        couldNot,
        listed,
      ]),
      execution('E2', fallback, ['`broken.json` could not be loaded (JSONDecodeError).']),
    ],
  ];

  it("keeps a table's own shape before the workspace's inventory (the ragged table's section had none of it)", async () => {
    const shape = [
      '`ragged.csv`: 1 row × 2 columns (`a`, `b`).',
      '`ragged.csv`: `a` holds a single value (`1`) in every row.',
    ];
    const drafts = await createOfflineDeepRoles().compress(
      {
        subQuestion: ragged('S2', [])[0],
        result: recorded[0]?.turn ?? ({} as never),
        executions: [execution('E1', load, [...inventory, '1 table loaded from 1 file.', ...shape])],
        askFollowUp: () => Promise.reject(new Error('not asked')),
      },
      context,
    );
    // At most 4 about the data's shape: its table's first, then the inventory, in the order printed.
    expect(drafts.map((draft) => draft.claim)).toEqual([...inventory.slice(0, 2), ...shape]);
  });

  it("writes a table's inventory claims in the unreadable files' section, an identical one once", async () => {
    const roles = createOfflineDeepRoles();
    const orders: [SubQuestion, ExecutionRecord[]] = [
      { id: 'S1', question: 'What does orders.csv show: how?', tables: ['orders.csv'], round: 0 },
      [execution('E1', correlations, ['`a` and `b` (`orders.csv`): r = 1.'])],
    ];
    const evidence = await evidenceOf(roles, [
      orders,
      ragged('S2', [...inventory, '`ragged.csv`: 1 row × 2 columns (`a`, `b`).']),
      unreadable(),
    ]);
    const claimOf = (id: string) => evidence.find((item) => item.id === id)?.claim;
    const outline = await roles.plan({ brief, evidence, round: 1, maxRounds: 1 }, context);
    const sections = outline.sections.map((section) => [section.title, section.evidenceIds.map(claimOf)]);
    expect(sections).toEqual([
      ['orders.csv', ['`a` and `b` (`orders.csv`): r = 1.']],
      ['ragged.csv', ['`ragged.csv`: 1 row × 2 columns (`a`, `b`).']],
      [
        'The files that could not be read',
        [
          holds('are not among the tables this part of the analysis studies'),
          couldNot,
          couldNot,
          listed,
          listed,
          '`broken.json` could not be loaded (JSONDecodeError).',
          holds('is not one of the tables this part of the analysis studies'),
        ],
      ],
    ]);
    const cited = outline.sections.flatMap((section) => section.evidenceIds);
    expect([...cited].sort()).toEqual(evidence.map((item) => item.id).sort());
    const section = outline.sections[2];
    if (section === undefined) throw new Error('no section');
    const written = await roles.write(
      {
        brief,
        section: { id: 'SEC3', ...section },
        evidence: evidence.filter((item) => section.evidenceIds.includes(item.id)),
      },
      context,
    );
    expect(written.split(couldNot)).toHaveLength(2);
    expect(written.split(listed)).toHaveLength(2);
  });

  it('writes them in "The data", after the tables, when no sub-analysis studied the unreadable files', async () => {
    const roles = createOfflineDeepRoles();
    const evidence = await evidenceOf(roles, [
      [
        { id: 'S1', question: 'What does orders.csv show: how?', tables: ['orders.csv'], round: 0 },
        [
          execution('E1', load, [...inventory.slice(0, 2), '`orders.csv`: 5 rows.']),
          execution('E2', correlations, ['`a` and `b` (`orders.csv`): r = 1.']),
        ],
      ],
      ragged('S2', [...inventory.slice(0, 2), '`ragged.csv`: 1 row × 2 columns (`a`, `b`).']),
    ]);
    const outline = await roles.plan({ brief, evidence, round: 1, maxRounds: 1 }, context);
    expect(outline.sections.map((section) => [section.title, section.evidenceIds])).toEqual([
      // EV5 and EV6 repeat EV1 and EV2 word for word: each is written once, citing both.
      ['The data', ['EV3', 'EV1', 'EV5', 'EV2', 'EV6']],
      ['orders.csv', ['EV4']],
      ['ragged.csv', ['EV7']],
    ]);
  });
});

describe('supervise', () => {
  it('takes the brief questions in order, bounded by its own option and by the engine budget', async () => {
    const roles = createOfflineDeepRoles({ maxSubAnalyses: 4 });
    const scoped = await roles.scope({ question: 'Report.', profile: profile(), mayAsk: false }, context);
    if (!('brief' in scoped)) throw new Error('asked');
    const four = await roles.supervise(
      { brief: scoped.brief, profile: profile(), maxSubAnalyses: 10 },
      context,
    );
    expect(four).toEqual(scoped.brief.questions.slice(0, 4));
    const two = await roles.supervise(
      { brief: scoped.brief, profile: profile(), maxSubAnalyses: 2 },
      context,
    );
    expect(two).toEqual(scoped.brief.questions.slice(0, 2));
    expect(four.map((draft) => draft.question)).toEqual(recorded.map((run) => run.question));
  });
});

describe('the sub-analyst', () => {
  it('studies only its tables: its load cell, on the recorded conversation, reads exactly them', async () => {
    const roles = createOfflineDeepRoles();
    for (const run of recorded) {
      const scoped = await roles.scope({ question: 'Report.', profile: run.profile, mayAsk: false }, context);
      if (!('brief' in scoped)) throw new Error('asked');
      const tables = scoped.brief.questions.find((entry) => entry.question === run.question)?.tables ?? [];
      const model = roles.subAnalystModel(subQuestionOf(run, tables));
      expect(model.offline).toBe(true);
      // The recorded turns up to the load step (setup, helpers, registry), then the model's next turn.
      const messages: ChatMessage[] = [
        { role: 'user', content: formatFirstMessage(run.question, run.profile) },
      ];
      const turns = run.records.filter((record) => record.type === 'model-turn');
      const loadIndex = turns.findIndex((turn) => turn.text.includes('offline-analyst step: load'));
      expect(loadIndex, run.id).toBeGreaterThan(0);
      for (const [index, turn] of turns.slice(0, loadIndex).entries()) {
        messages.push({ role: 'assistant', content: turn.text });
        messages.push({ role: 'execute', content: run.executions[index]?.executeText ?? '' });
      }
      const next = await collect(model, messages);
      expect(next).toContain('offline-analyst step: load');
      // The load cell's sources: one `("file", "table", "load code")` line per table it reads.
      const listed = Array.from(next.matchAll(/^ {4}\("([^"]+)", "[^"]*", /gm), (match) => match[1]);
      expect(listed.sort(), run.id).toEqual([...tables].sort());
      expect(await collect(roles.subAnalystModel(subQuestionOf(run, tables)), messages)).toBe(next);
    }
  });

  it('breaks down no columns the user did not name: the sub-question and its file names name none', async () => {
    // S1 joins the tables; its instruction says "Start with: bool.csv, …, longest_absense_from_school.csv", whose
    // words named `bool` and `school`: the analyst ran a breakdown "of the columns named in the instruction".
    const run = recorded[0];
    if (run === undefined) throw new Error('no recorded sub-runs');
    const roles = createOfflineDeepRoles();
    const scoped = await roles.scope(
      { question: 'Generate a data science report.', profile: run.profile, mayAsk: false },
      context,
    );
    if (!('brief' in scoped)) throw new Error('asked');
    const tables = scoped.brief.questions.find((entry) => entry.question === run.question)?.tables ?? [];
    expect(tables).toContain('longest_absense_from_school.csv');
    const subQuestion = subQuestionOf(run, tables);
    const messages: ChatMessage[] = [
      {
        role: 'user',
        content: formatFirstMessage(subAnalysisInstruction(subQuestion, scoped.brief), run.profile),
      },
    ];
    const turns = run.records.filter((record) => record.type === 'model-turn');
    const cells = turns.filter((turn) => turn.text.includes('<Code>'));
    for (const [index, turn] of cells.entries()) {
      messages.push({ role: 'assistant', content: turn.text });
      messages.push({ role: 'execute', content: run.executions[index]?.executeText ?? '' });
    }
    const next = await collect(roles.subAnalystModel(subQuestion), messages);
    expect(next).not.toContain('offline-analyst step: focus');
    expect(next).toContain('<Answer>');
  });

  it('focuses on one table of a file named `file#table`, and on everything when no name matches', () => {
    const entries = [
      { name: 'a.csv', size: '1KB', tables: [{ name: '', rows: 1, load: '', columns: [] }] },
      {
        name: 'db.sqlite',
        size: '1KB',
        more_tables: 3,
        tables: [
          { name: 'x', rows: 1, load: '', columns: [] },
          { name: 'y', rows: 1, load: '', columns: [] },
        ],
      },
    ];
    expect(focusEntries(entries, ['db.sqlite#y'])).toEqual([
      { name: 'db.sqlite', size: '1KB', tables: [{ name: 'y', rows: 1, load: '', columns: [] }] },
    ]);
    expect(focusEntries(entries, ['a.csv'])).toEqual([entries[0]]);
    expect(focusEntries(entries, ['missing.csv'])).toEqual(entries);
    expect(focusEntries(entries, [])).toEqual(entries);
  });
});

describe('compress', () => {
  it('drafts the printed findings verbatim, each citing the output that printed it and its figures', async () => {
    const roles = createOfflineDeepRoles();
    for (const run of recorded) {
      const input = {
        subQuestion: subQuestionOf(run, []),
        result: run.turn,
        executions: run.executions,
        askFollowUp: () => Promise.reject(new Error('not asked')),
      };
      const drafts = await roles.compress(input, context);
      expect(drafts.length, run.id).toBeGreaterThanOrEqual(3);
      expect(drafts.length).toBeLessThanOrEqual(10);
      for (const draft of drafts) {
        expect(draft.outputs).toHaveLength(1);
        const execution = run.executions.find((entry) => entry.outputId === draft.outputs[0]);
        expect(execution?.result.stdout.text).toContain(`- ${draft.claim}\n`);
        for (const figure of draft.figures) {
          const [outputId, visual] = figure.split('#');
          expect(outputId).toBe(execution?.outputId);
          const [, kind, index] = /^(figure|chart)(\d+)$/.exec(visual ?? '') ?? [];
          const list = kind === 'figure' ? execution?.result.figures : execution?.result.charts;
          expect(list?.[Number(index)]).toBeDefined();
        }
      }
      expect(await createOfflineDeepRoles().compress(input, context)).toEqual(drafts);
    }
  });

  it('keeps at most maxEvidencePerSubAnalysis, the analysis before the shape of the data', async () => {
    const run = recorded[0];
    if (run === undefined) throw new Error('no run');
    const drafts = await createOfflineDeepRoles({ maxEvidencePerSubAnalysis: 3 }).compress(
      {
        subQuestion: subQuestionOf(run, []),
        result: run.turn,
        executions: run.executions,
        askFollowUp: () => Promise.reject(new Error('not asked')),
      },
      context,
    );
    expect(drafts).toHaveLength(3);
  });
});

describe('plan and write, through the whole recorded run', () => {
  let record: DeepRecord;
  beforeAll(async () => {
    record = await buildRecordedDeepRun(path.join(root, 'deep'));
  });

  it('writes a readable deep.json whose outline cites every evidence item exactly once', async () => {
    expect(await readDeepRecord(path.join(root, 'deep'))).toEqual(record);
    const cited = record.outline?.sections.flatMap((section) => section.evidenceIds) ?? [];
    expect([...cited].sort()).toEqual(record.evidence.map((item) => item.id).sort());
    expect(record.outline?.sections.map((section) => section.title)).toEqual([
      'The data',
      'enrolled.csv',
      'longest_absense_from_school.csv',
      'no_payment_due.csv',
      'How the tables relate',
    ]);
  });

  it('writes each section from its evidence only, citing each item, every number copied and grounded', () => {
    for (const section of record.sections) {
      const outline = record.outline?.sections.find((entry) => entry.id === section.id);
      expect(section.citedEvidenceIds).toEqual(outline?.evidenceIds);
      const foreign = Array.from(section.markdown.matchAll(/\[(EV\d+)\]/g), (match) => match[1]).filter(
        (id) => !outline?.evidenceIds.includes(id ?? ''),
      );
      expect(foreign).toEqual([]);
      expect(section.numbers.filter((number) => !number.verified)).toEqual([]);
    }
    expect(record.sections.flatMap((section) => section.numbers).length).toBeGreaterThan(20);
    expect(record.evidence.flatMap((item) => item.numbers).filter((number) => !number.verified)).toEqual([]);
  });

  it('grounds a section only in the outputs of the evidence it was given', async () => {
    const roles = createOfflineDeepRoles();
    const section = record.outline?.sections[1];
    if (section === undefined || record.brief === null) throw new Error('no section');
    const given = record.evidence.filter((item) => section.evidenceIds.includes(item.id));
    const markdown = await roles.write({ brief: record.brief, section, evidence: given }, context);
    const outputs = new Set(given.flatMap((item) => item.outputs));
    const sources = recorded.flatMap((run) =>
      groundingSources(run.executions)
        .map((source) => ({ ...source, outputId: `${run.id}:${source.outputId}` }))
        .filter((source) => outputs.has(source.outputId)),
    );
    const index = buildNumberIndex(sources);
    const numbers = findNumberMentions(markdown.replace(/\[EV\d+\]/g, '')).map((mention) =>
      groundMention(mention, index),
    );
    expect(numbers.length).toBeGreaterThan(0);
    expect(numbers.filter((number) => !number.verified).map((number) => number.text)).toEqual([]);
    expect(
      await createOfflineDeepRoles().write({ brief: record.brief, section, evidence: given }, context),
    ).toBe(markdown);
  });

  it('flags a claim with an unverified number, and writes a section with no evidence honestly', async () => {
    const roles = createOfflineDeepRoles();
    if (record.brief === null) throw new Error('no brief');
    const item: EvidenceItem = {
      id: 'EV1',
      subAnalysisId: 'S1',
      claim: 'The mean is 12.5.',
      numbers: [{ text: '12.5', output: null, verified: false }],
      outputs: ['S1:E3'],
      figures: [],
    };
    const section = { id: 'SEC1', title: 'x', purpose: 'y', evidenceIds: ['EV1'] };
    expect(await roles.write({ brief: record.brief, section, evidence: [item] }, context)).toContain(
      '- The mean is 12.5. [EV1] (not every number of it was found in the output it cites)',
    );
    expect(
      await roles.write(
        { brief: record.brief, section: { ...section, evidenceIds: [] }, evidence: [] },
        context,
      ),
    ).toMatch(/^No evidence was found/);
  });

  it('plans a section per sub-analysis it knows nothing about (evidence it did not compress)', async () => {
    if (record.brief === null) throw new Error('no brief');
    const outline = await createOfflineDeepRoles().plan(
      { brief: record.brief, evidence: record.evidence.slice(0, 3), round: 1, maxRounds: 2 },
      context,
    );
    expect(outline).toEqual({
      sections: [
        {
          title: 'Findings of S1',
          purpose: 'What this sub-analysis found.',
          evidenceIds: record.evidence.slice(0, 3).map((item) => item.id),
        },
      ],
      gaps: [],
    });
  });

  it('gives a sub-analysis that found only its data a section of its own, and writes a repeated claim once', async () => {
    const roles = createOfflineDeepRoles();
    if (record.brief === null) throw new Error('no brief');
    // compress notes each sub-analysis's question and the step behind each claim: overview (data) or correlations.
    const overview = '# offline-analyst step: overview\n';
    const correlations = '# offline-analyst step: correlations\n';
    const base = recorded[0]?.executions[0];
    const turn = recorded[0]?.turn;
    if (base === undefined || turn === undefined) throw new Error('no recorded sub-runs');
    const execution = (outputId: string, code: string, findings: string[]): ExecutionRecord => ({
      ...base,
      outputId,
      code,
      result: {
        ...base.result,
        status: 'ok',
        stdout: {
          ...base.result.stdout,
          text: `Findings:\n${findings.map((line) => `- ${line}`).join('\n')}\n`,
        },
        figures: [],
        charts: [],
      },
    });
    const repeated = '`month` differs by `school` in `enrolled.csv` (large effect, eta squared = 0.202).';
    const subs: [SubQuestion, ExecutionRecord[]][] = [
      [
        { id: 'S1', question: 'What does orders.csv show: how?', tables: ['orders.csv'], round: 0 },
        [execution('E1', overview, ['`orders.csv`: 5 rows.']), execution('E2', correlations, [repeated])],
      ],
      [
        { id: 'S2', question: 'What does ragged.csv show: how?', tables: ['ragged.csv'], round: 0 },
        [execution('E1', overview, ['`ragged.csv`: 5 rows.'])],
      ],
      [
        { id: 'S3', question: 'What does enrolled.csv show: how?', tables: ['enrolled.csv'], round: 0 },
        [execution('E1', correlations, [repeated, '`a` and `b` (`enrolled.csv`): r = 1.'])],
      ],
    ];
    const evidence: EvidenceItem[] = [];
    for (const [subQuestion, executions] of subs) {
      const drafts = await roles.compress(
        {
          subQuestion,
          result: turn,
          executions,
          askFollowUp: () => Promise.reject(new Error('not asked')),
        },
        context,
      );
      for (const draft of drafts)
        evidence.push({
          id: `EV${evidence.length + 1}`,
          subAnalysisId: subQuestion.id,
          claim: draft.claim,
          numbers: [],
          outputs: draft.outputs,
          figures: [],
        });
    }
    const outline = await roles.plan({ brief: record.brief, evidence, round: 1, maxRounds: 1 }, context);
    expect(outline.sections.map((section) => [section.title, section.evidenceIds])).toEqual([
      ['The data', ['EV1']],
      ['orders.csv', ['EV2', 'EV4']],
      // ragged.csv printed only its shape: it went to "The data" and had no section of its own.
      ['ragged.csv', ['EV3']],
      ['enrolled.csv', ['EV5']],
    ]);
    const section = { id: 'SEC2', title: 'orders.csv', purpose: '', evidenceIds: ['EV2', 'EV4'] };
    const written = await roles.write(
      { brief: record.brief, section, evidence: evidence.filter((item) => ['EV2', 'EV4'].includes(item.id)) },
      context,
    );
    expect(written.split(repeated)).toHaveLength(2);
    expect(written).toContain(`- ${repeated} [EV2][EV4]`);
  });

  it('gives the same record for the same recorded sub-runs', async () => {
    expect(await buildRecordedDeepRun(path.join(root, 'again'))).toEqual(record);
  });
});
