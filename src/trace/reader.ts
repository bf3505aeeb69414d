import { readFile } from 'node:fs/promises';
import { TraceError } from '../errors/index.ts';
import { traceDocumentSchema, traceRecordSchema } from './schema.ts';
import type { TraceDocument, TraceRecord } from './schema.ts';

/** A trace read from disk, with what was missing or cut off. */
export interface ReadTrace extends TraceDocument {
  /**
   * True when the trace has no `run-end` record after its last turn began:
   * the run crashed, or the thread is still open (it may be between turns).
   */
  partial: boolean;
  /** True when the last line of a `trace.jsonl` was cut off mid-record and was dropped. */
  truncatedLastLine: boolean;
}

export interface ReadTraceOptions {
  signal?: AbortSignal;
}

/**
 * Reads `trace.jsonl` (one record a line, as the agent appends them) or
 * `trace.json` (one document). Every record is checked against the schema.
 * A trace cut short by a crash is still readable: a missing `run-end` is
 * reported as `partial`, and a half-written last line is dropped.
 */
export async function readTrace(path: string, options: ReadTraceOptions = {}): Promise<ReadTrace> {
  let text: string;
  try {
    text = await readFile(path, { encoding: 'utf8', ...(options.signal ? { signal: options.signal } : {}) });
  } catch (error) {
    throw new TraceError(`Cannot read the trace at ${path}.`, error);
  }
  try {
    return path.endsWith('.jsonl') ? parseTraceLines(text) : parseTraceDocument(text);
  } catch (error) {
    // The parser's message says what is wrong; which file, only the caller knows.
    if (error instanceof TraceError) throw new TraceError(`${path}: ${error.message}`, error.cause);
    throw error;
  }
}

/** Parses `trace.json`: `{ version, records: [...] }`. */
export function parseTraceDocument(text: string): ReadTrace {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new TraceError('The trace is not valid JSON.', error);
  }
  const parsed = traceDocumentSchema.safeParse(json);
  if (!parsed.success) {
    throw new TraceError(
      `The trace does not match the schema (versions 1 and 2): ${summarizeIssues(parsed.error.issues)}`,
      parsed.error,
    );
  }
  return finish(parsed.data.records, false);
}

/** Parses `trace.jsonl`: one record per line; blank lines are ignored. */
export function parseTraceLines(text: string): ReadTrace {
  const lines = text.split('\n');
  const records: TraceRecord[] = [];
  let truncatedLastLine = false;
  let lastContentLine = lines.length - 1;
  while (lastContentLine >= 0 && (lines[lastContentLine] ?? '').trim() === '') lastContentLine--;
  for (let index = 0; index <= lastContentLine; index++) {
    const line = (lines[index] ?? '').trim();
    if (line === '') continue;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (error) {
      // A crash while appending leaves a half-written last line: keep what came before it.
      if (index === lastContentLine && index > 0) {
        truncatedLastLine = true;
        break;
      }
      throw new TraceError(`Line ${index + 1} of the trace is not valid JSON.`, error);
    }
    const parsed = traceRecordSchema.safeParse(json);
    if (!parsed.success) {
      throw new TraceError(
        `Line ${index + 1} of the trace does not match the schema: ${summarizeIssues(parsed.error.issues)}`,
        parsed.error,
      );
    }
    records.push(parsed.data);
  }
  return finish(records, truncatedLastLine);
}

function finish(records: TraceRecord[], truncatedLastLine: boolean): ReadTrace {
  const first = records[0];
  if (first?.type !== 'run-start') {
    throw new TraceError('The trace does not start with a run-start record.');
  }
  const lastEnd = records.findLastIndex((record) => record.type === 'run-end');
  const lastTurn = records.findLastIndex((record) => record.type === 'turn-start');
  const partial = lastEnd === -1 || lastTurn > lastEnd;
  return { version: first.version, records, partial, truncatedLastLine };
}

function summarizeIssues(issues: readonly { path: readonly PropertyKey[]; message: string }[]): string {
  return issues
    .slice(0, 3)
    .map((issue) => `${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`)
    .join('; ');
}
