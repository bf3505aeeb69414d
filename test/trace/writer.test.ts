import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TraceWriter } from '../../src/trace/index.ts';
import { parseTraceDocument, parseTraceLines, readTrace } from '../../src/trace/reader.ts';
import { traceDocumentSchema, traceRecordSchema, type TraceRecord } from '../../src/trace/schema.ts';
import { DatalystError } from '../../src/errors/index.ts';
import { descriptorsOn } from '../support/open-descriptors.ts';

let runDir: string;
beforeEach(async () => {
  runDir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-trace-'));
});
afterEach(async () => {
  await rm(runDir, { recursive: true, force: true });
});

const notice = (round: number, text = `nudge ${round}`): TraceRecord => ({
  type: 'notice',
  at: new Date().toISOString(),
  round,
  kind: 'nudge',
  text,
});

const runStart: TraceRecord = {
  type: 'run-start',
  version: 1,
  runId: 'r',
  startedAt: new Date().toISOString(),
  instruction: 'x',
  workspace: { path: '/w', files: [] },
  model: { id: 'm', profile: 'chat', baseUrl: null, offline: false },
  limits: {
    maxRounds: 30,
    cellTimeoutMs: 1000,
    memoryMb: 512,
    cpus: 1,
    deadlineMs: null,
    contextBudgetTokens: 1000,
  },
  environment: { datalystVersion: '0', nodeVersion: 'v20', sandboxBackend: 'docker', image: null },
};

describe('TraceWriter', () => {
  it('appends one validated record per line while the run goes on', async () => {
    const writer = TraceWriter.open(runDir);
    writer.append(notice(1));
    const afterOne = await readFile(path.join(runDir, 'trace.jsonl'), 'utf8');
    expect(afterOne.split('\n')).toHaveLength(2);
    writer.append(notice(2));
    const lines = (await readFile(path.join(runDir, 'trace.jsonl'), 'utf8')).trimEnd().split('\n');
    expect(lines.map((line) => traceRecordSchema.parse(JSON.parse(line)))).toEqual(
      [notice(1), notice(2)].map((r) => ({ ...r, at: expect.any(String) })),
    );
    // No trace.json until the run finishes: a killed run leaves only the lines.
    expect(existsSync(path.join(runDir, 'trace.json'))).toBe(false);
    writer.finish();
  });

  it('writes trace.json with every record on finish', async () => {
    const writer = TraceWriter.open(runDir, { sync: 'record' });
    writer.append(notice(1));
    writer.append(notice(2));
    writer.finish();
    writer.finish();
    const document = traceDocumentSchema.parse(
      JSON.parse(await readFile(path.join(runDir, 'trace.json'), 'utf8')),
    );
    expect(document.records.map((record) => record.type)).toEqual(['notice', 'notice']);
    expect(() => writer.append(notice(3))).toThrow(DatalystError);
  });

  it('writes an empty trace.json for a trace with no records', async () => {
    TraceWriter.open(runDir).finish();
    expect(JSON.parse(await readFile(path.join(runDir, 'trace.json'), 'utf8'))).toEqual({
      version: 2,
      records: [],
    });
  });

  it('streams trace.json from the lines: records larger than a copy chunk, line breaks and non-ASCII text survive', async () => {
    const writer = TraceWriter.open(runDir);
    writer.append(runStart);
    // 3 MiB of text with line breaks, multi-byte characters and a character outside the BMP.
    const bigText = `first line\nsecond ünïcödé 📈 line\n${'é中x'.repeat(1024 * 1024)}\nlast`;
    writer.append(notice(1, bigText));
    writer.append(notice(2, 'small'));
    writer.finish();
    const fromLines = parseTraceLines(await readFile(path.join(runDir, 'trace.jsonl'), 'utf8'));
    const fromDocument = parseTraceDocument(await readFile(path.join(runDir, 'trace.json'), 'utf8'));
    expect(fromDocument.records).toEqual(fromLines.records);
    expect(fromDocument.records[1]).toMatchObject({ type: 'notice', text: bigText });
    expect(fromDocument.partial).toBe(true);
  });

  it('when trace.json cannot be written, finish throws TraceError and trace.jsonl stays open for one more record', async () => {
    // A directory in the way: the rename onto trace.json fails.
    await mkdir(path.join(runDir, 'trace.json', 'in-the-way'), { recursive: true });
    const writer = TraceWriter.open(runDir);
    writer.append(notice(1));
    expect(() => writer.finish()).toThrow(expect.objectContaining({ code: 'TRACE_INVALID' }));
    writer.append(notice(2, 'why trace.json is missing'));
    writer.finish();
    expect(() => writer.append(notice(3))).toThrow(DatalystError);
    const lines = (await readFile(path.join(runDir, 'trace.jsonl'), 'utf8')).trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    // The temporary file is not left behind.
    expect((await readdir(runDir)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('refuses a record that breaks the schema and keeps the earlier ones', async () => {
    const writer = TraceWriter.open(runDir);
    writer.append(notice(1));
    const broken = { ...notice(2), round: -1 };
    expect(() => writer.append(broken)).toThrow(expect.objectContaining({ code: 'TRACE_INVALID' }));
    writer.finish();
    const lines = (await readFile(path.join(runDir, 'trace.jsonl'), 'utf8')).trimEnd().split('\n');
    expect(lines).toHaveLength(1);
  });

  it.runIf(process.platform === 'linux')(
    'abandon (after a bug) closes trace.jsonl with no end record; the lines written stay readable',
    async () => {
      const writer = TraceWriter.open(runDir);
      const jsonlPath = path.join(runDir, 'trace.jsonl');
      writer.append(runStart);
      writer.append(notice(1));
      const before = await readFile(jsonlPath);
      expect(descriptorsOn(jsonlPath)).toBe(1);
      writer.abandon();
      expect(descriptorsOn(jsonlPath)).toBe(0);
      // Kept byte for byte, with no trace.json and no run-end: what a crash leaves, which readers handle.
      expect(await readFile(jsonlPath)).toEqual(before);
      expect(existsSync(path.join(runDir, 'trace.json'))).toBe(false);
      const read = await readTrace(jsonlPath);
      expect(read.records.map((record) => record.type)).toEqual(['run-start', 'notice']);
      expect(read.partial).toBe(true);
      expect(() => writer.append(notice(2))).toThrow(expect.objectContaining({ code: 'TRACE_INVALID' }));
      writer.abandon();
      writer.finish();
      expect(existsSync(path.join(runDir, 'trace.json'))).toBe(false);
    },
  );

  it('never opens a second trace in the same run folder', () => {
    const writer = TraceWriter.open(runDir);
    expect(() => TraceWriter.open(runDir)).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
    writer.finish();
  });
});
