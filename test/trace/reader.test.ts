import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatalystError } from '../../src/errors/index.ts';
import { parseTraceLines, readTrace } from '../../src/trace/reader.ts';
import { makeSyntheticTrace } from '../fixtures/traces/synthetic-trace.ts';

const trace = makeSyntheticTrace({ rounds: 2, charts: 1, figures: 1 });
const lines = trace.records.map((record) => JSON.stringify(record));
let dir = '';

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'datalyst-reader-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function codeOf(work: () => unknown): string | undefined {
  try {
    work();
  } catch (error) {
    return DatalystError.isInstance(error) ? error.code : 'not-a-datalyst-error';
  }
  return undefined;
}

describe('readTrace', () => {
  it('reads trace.jsonl and trace.json to the same records', async () => {
    await writeFile(join(dir, 'trace.jsonl'), `${lines.join('\n')}\n`);
    await writeFile(
      join(dir, 'trace.json'),
      JSON.stringify({ version: trace.version, records: trace.records }),
    );
    const fromLines = await readTrace(join(dir, 'trace.jsonl'));
    const fromDocument = await readTrace(join(dir, 'trace.json'));
    expect(fromLines.records).toEqual(trace.records);
    expect(fromDocument.records).toEqual(trace.records);
    expect(fromLines).toMatchObject({ partial: false, truncatedLastLine: false });
  });

  it('reads a trace cut off by a crash: no run-end and a half-written last line', () => {
    const withoutEnd = lines.slice(0, -1);
    const cut = [...withoutEnd.slice(0, -1), withoutEnd.at(-1)?.slice(0, 40) ?? ''].join('\n');
    const read = parseTraceLines(cut);
    expect(read.partial).toBe(true);
    expect(read.truncatedLastLine).toBe(true);
    expect(read.records).toHaveLength(withoutEnd.length - 1);
  });

  it('rejects a record that does not match the schema with TraceError', () => {
    const broken = [lines[0], JSON.stringify({ type: 'step', round: 0, kind: 'analyze' }), lines[2]].join(
      '\n',
    );
    expect(codeOf(() => parseTraceLines(broken))).toBe('TRACE_INVALID');
  });

  it('rejects invalid JSON before the last line and a trace without run-start', () => {
    expect(codeOf(() => parseTraceLines([lines[0], '{oops', lines[2]].join('\n')))).toBe('TRACE_INVALID');
    expect(codeOf(() => parseTraceLines(lines.slice(1).join('\n')))).toBe('TRACE_INVALID');
  });

  it('turns a missing file into TraceError', async () => {
    await expect(readTrace(join(dir, 'missing.jsonl'))).rejects.toMatchObject({ code: 'TRACE_INVALID' });
  });
});
