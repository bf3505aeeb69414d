import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TraceWriter } from '../../src/trace/index.ts';
import { traceDocumentSchema, traceRecordSchema, type TraceRecord } from '../../src/trace/schema.ts';
import { DatalystError } from '../../src/errors/index.ts';

let runDir: string;
beforeEach(async () => {
  runDir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-trace-'));
});
afterEach(async () => {
  await rm(runDir, { recursive: true, force: true });
});

const notice = (round: number): TraceRecord => ({
  type: 'notice',
  at: new Date().toISOString(),
  round,
  kind: 'nudge',
  text: `nudge ${round}`,
});

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
    writer.close();
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

  it('refuses a record that breaks the schema and keeps the earlier ones', async () => {
    const writer = TraceWriter.open(runDir);
    writer.append(notice(1));
    const broken = { ...notice(2), round: -1 };
    expect(() => writer.append(broken)).toThrow(expect.objectContaining({ code: 'TRACE_INVALID' }));
    writer.close();
    const lines = (await readFile(path.join(runDir, 'trace.jsonl'), 'utf8')).trimEnd().split('\n');
    expect(lines).toHaveLength(1);
  });

  it('never opens a second trace in the same run folder', () => {
    const writer = TraceWriter.open(runDir);
    expect(() => TraceWriter.open(runDir)).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
    writer.close();
  });
});
