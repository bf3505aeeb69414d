import { stat } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { JsonLine } from '../../src/cli/json-line-schema.ts';
import { readDeepRecord, type DeepEvent } from '../../src/deep/index.ts';
import { createFakeSandbox, printed } from '../agent/support/fake-session.ts';
import { removeTemporaryDirs, runDatalyst, temporaryDir } from '../cli/support/cli-harness.ts';
import {
  startFakeOpenAIServer,
  type FakeOpenAIServer,
  type RecordedRequest,
} from '../support/fake-openai-server.ts';
import { shippedSchemaValidator } from '../support/json-schema-validator.ts';
import {
  answerReply,
  codeReply,
  deepScript,
  deepWorkspace,
  evidenceInRequest,
  json,
  lastUserMessage,
  text,
} from './support/scripted-deep-model.ts';

/**
 * `datalyst analyze --deep` in-process: the real options, engine, model roles
 * and model client over HTTP (the fake OpenAI server); the sandbox sessions
 * are fakes (the docker test runs real ones).
 */

// Fails to compile when a deep event has no line in the --json schema.
type Uncovered = Exclude<DeepEvent['type'], JsonLine['type']>;
const everyDeepEventCovered: [Uncovered] extends [never] ? true : Uncovered = true;

let server: FakeOpenAIServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
  await removeTemporaryDirs();
});

const script = deepScript({
  subQuestions: [
    { question: 'What is the revenue by region?', tables: ['sales.csv'] },
    { question: 'What do the costs add up to?', tables: ['costs.csv'] },
  ],
  subAnalysts: [
    {
      match: 'revenue by region',
      turns: [codeReply("print('revenue')"), answerReply('North 2241.0.')],
      compress: json({ evidence: [{ claim: 'North brought 2,241.', outputs: ['E1'] }] }),
    },
    {
      match: 'costs',
      turns: [codeReply("print('costs')"), answerReply('Costs 4665.5.')],
      compress: json({ evidence: [{ claim: 'Costs total 4,665.5.', outputs: ['E1'] }] }),
    },
  ],
  plan: (request: RecordedRequest) =>
    json({
      sections: evidenceInRequest(request).map((item) => ({
        title: `On ${item.id}`,
        purpose: '',
        evidenceIds: [item.id],
      })),
      gaps: [],
    }),
  write: (request: RecordedRequest) =>
    text(
      `<Answer>${/^EV\d+ \(from S\d+[^)]*\): (.*)$/m.exec(lastUserMessage(request))?.[1] ?? ''} [${/^(EV\d+) \(from/m.exec(lastUserMessage(request))?.[1] ?? ''}]</Answer>`,
    ),
});

async function deepRun(flags: string[]) {
  server = await startFakeOpenAIServer({ script: Array.from({ length: 30 }, () => script) });
  const out = path.join(await temporaryDir(), 'deep');
  const sandbox = createFakeSandbox({
    run: (code) =>
      printed(code.includes('revenue') ? "{'North': 2241.0, 'South': 1442.5}\n" : '4665.5 2750.0\n'),
  });
  const run = await runDatalyst(
    [
      'analyze',
      await deepWorkspace(),
      'Report.',
      '--model',
      'fake-model',
      '--base-url',
      server.baseUrl,
      '--out',
      out,
      '--deep',
      ...flags,
    ],
    { createSandbox: sandbox.factory },
  );
  return { run, out, sandbox };
}

describe('datalyst analyze --deep', () => {
  it('prints a line per phase and per sub-analysis start and end, writes deep.json and exits 0', async () => {
    const { run, out, sandbox } = await deepRun(['--concurrency', '2', '--sub-analyses', '3']);
    expect(run.stderr).toBe('');
    expect(run.exitCode).toBe(0);
    for (const line of [
      'Deep analysis ',
      'up to 2 sub-analyses at once',
      'Scope: writing the brief…',
      'Research: running the sub-analyses…',
      '  S1 started: What is the revenue by region? [sales.csv]',
      '  S2 started: What do the costs add up to? [costs.csv]',
      '  S1 answered: Answered in 2 rounds.',
      '  S2 answered: Answered in 2 rounds.',
      'Outline: 2 sections',
      'Ended answered',
      `Deep run record: ${path.join(out, 'deep.json')}`,
    ])
      expect(run.stdout).toContain(line);
    const record = await readDeepRecord(out);
    expect(record?.sections.map((section) => section.markdown)).toEqual([
      'North brought 2,241. [EV1]',
      'Costs total 4,665.5. [EV2]',
    ]);
    expect(record?.sections.flatMap((section) => section.numbers.map((number) => number.verified))).toEqual([
      true,
      true,
    ]);
    expect(sandbox.sessions.every((session) => session.closed)).toBe(true);
    // Every format a deep report has, and no warning about the default formats.
    for (const file of ['report.html', 'report.md', 'analysis.ipynb', 'deep.json'])
      expect(await stat(path.join(out, file)).then((found) => found.isFile())).toBe(true);
    expect(run.stdout).not.toMatch(/has no|not written/);
  });

  it('writes only the formats asked for', async () => {
    const { run, out } = await deepRun(['--format', 'ipynb', '--concurrency', '1']);
    expect(run.exitCode).toBe(0);
    expect(await stat(path.join(out, 'analysis.ipynb')).then((found) => found.isFile())).toBe(true);
    expect(await stat(path.join(out, 'report.html')).catch(() => null)).toBeNull();
    expect(await stat(path.join(out, 'report.md')).catch(() => null)).toBeNull();
  });

  it('refuses --deep with --continue, naming both, before anything runs', async () => {
    const { run, out } = await deepRun(['--continue', path.join(await temporaryDir(), 'earlier-run')]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('--deep and --continue do not go together');
    expect(await stat(out).catch(() => null)).toBeNull();
    expect(server?.requests ?? []).toHaveLength(0);
  });

  it('--json writes every deep event as a line of the shipped schema, then report-end naming the report files', async () => {
    expect(everyDeepEventCovered).toBe(true);
    const { run, out } = await deepRun(['--json', '--concurrency', '1']);
    expect(run.exitCode).toBe(0);
    const lines = run.stdout
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as { type: string });
    const validate = shippedSchemaValidator('json-lines.schema.json');
    for (const line of lines) expect(validate(line), JSON.stringify(line).slice(0, 200)).toEqual([]);
    const types = lines.map((line) => line.type);
    expect(types[0]).toBe('workspace-check');
    expect(types).toContain('sub-analysis-start');
    expect(types).toContain('evidence-added');
    expect(types).toContain('profile-end');
    // As plain analyze: the report's files on stdout too, not only in the lines printed to stderr.
    expect(types.slice(-2)).toEqual(['deep-end', 'report-end']);
    const reportEnd = lines.at(-1) as unknown as {
      outDir: string;
      files: { format: string; path: string }[];
    };
    expect(reportEnd.outDir).toBe(out);
    expect(reportEnd.files).toEqual(
      expect.arrayContaining([
        { format: 'html', path: path.join(out, 'report.html') },
        { format: 'md', path: path.join(out, 'report.md') },
        { format: 'ipynb', path: path.join(out, 'analysis.ipynb') },
      ]),
    );
  });

  it('refuses a count that is not one, with exit 2', async () => {
    const { run, out } = await deepRun(['--concurrency', 'many']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('--concurrency many');
    // Refused before the pre-flight: no run folder.
    expect(await stat(out).catch(() => null)).toBeNull();
  });

  // What broke: `analyze ws "q" --sub-analyses 2` ran an ordinary analysis, the flag silently ignored.
  it('refuses --sub-analyses and --concurrency without --deep, with exit 2, before anything runs', async () => {
    const out = path.join(await temporaryDir(), 'plain');
    const sandbox = createFakeSandbox({ run: () => printed('unused\n') });
    const run = await runDatalyst(
      ['analyze', await deepWorkspace(), 'Report.', '--offline', '--sub-analyses', '2', '--out', out],
      { createSandbox: sandbox.factory },
    );
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain(
      '--sub-analyses is an option of a deep analysis: without --deep it would be ignored.',
    );
    expect(run.stderr).toContain('Add --deep');
    expect(await stat(out).catch(() => null)).toBeNull();
    const both = await runDatalyst(
      ['analyze', await deepWorkspace(), 'Report.', '--offline', '--concurrency', '2', '--sub-analyses', '3'],
      { createSandbox: sandbox.factory },
    );
    expect(both.exitCode).toBe(2);
    expect(both.stderr).toContain('--sub-analyses and --concurrency are options of a deep analysis');
  });
});
