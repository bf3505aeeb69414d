import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, TraceError } from '../errors/index.ts';
import { TRACE_VERSION, traceRecordSchema, type TraceDocument, type TraceRecord } from './schema.ts';

export interface TraceWriterOptions {
  /**
   * When to fsync `trace.jsonl`: after every record (`record`, survives a power
   * cut at the price of a disk flush per record), or only on `finish()`
   * (`finish`, the default: a killed process still leaves every written line,
   * since each append is one write(2) into the page cache).
   */
  sync?: 'record' | 'finish';
}

/**
 * Appends a run's trace to `<runDir>/trace.jsonl`, one validated record per
 * line, as the run goes on. Each record is written with a single synchronous
 * write on an O_APPEND descriptor, so a crash or a kill leaves whole lines up to
 * the last record (at worst a torn last line, which readers skip). Earlier
 * records are never rewritten. `finish()` also writes `trace.json`, the same
 * records in one document, atomically (temporary file and rename).
 */
export class TraceWriter {
  readonly jsonlPath: string;
  readonly jsonPath: string;
  private readonly records: TraceRecord[] = [];
  private fd: number | null;
  private readonly syncEachRecord: boolean;

  private constructor(runDir: string, fd: number, options: TraceWriterOptions) {
    this.jsonlPath = path.join(runDir, 'trace.jsonl');
    this.jsonPath = path.join(runDir, 'trace.json');
    this.fd = fd;
    this.syncEachRecord = options.sync === 'record';
  }

  /** Creates the run folder if needed and opens `trace.jsonl` for appending (it must not exist yet). */
  static open(runDir: string, options: TraceWriterOptions = {}): TraceWriter {
    mkdirSync(runDir, { recursive: true });
    try {
      // 'ax': append, fail if a trace is already there, so two runs never share one.
      const fd = openSync(path.join(runDir, 'trace.jsonl'), 'ax');
      return new TraceWriter(runDir, fd, options);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
        throw new ConfigError(
          `The run folder ${runDir} already holds a trace.`,
          'Choose another output folder, or remove the old run first.',
          error,
        );
      }
      throw error;
    }
  }

  /** The records written so far, in order. */
  get written(): readonly TraceRecord[] {
    return this.records;
  }

  /** Validates one record and appends it as one line. Throws TraceError on a record that breaks the schema. */
  append(record: TraceRecord): void {
    if (this.fd === null) throw new TraceError('The trace is already finished; no record can be added.');
    const parsed = traceRecordSchema.safeParse(record);
    if (!parsed.success) {
      throw new TraceError(
        `Refusing to write a ${record.type} record that breaks the trace schema.`,
        parsed.error,
      );
    }
    const line = `${JSON.stringify(parsed.data)}\n`;
    writeSync(this.fd, line);
    if (this.syncEachRecord) fsyncSync(this.fd);
    this.records.push(parsed.data);
  }

  /** Flushes and closes `trace.jsonl` and writes `trace.json`. Safe to call twice. */
  finish(): TraceDocument {
    const document: TraceDocument = { version: TRACE_VERSION, records: [...this.records] };
    if (this.fd === null) return document;
    try {
      fsyncSync(this.fd);
    } finally {
      closeSync(this.fd);
      this.fd = null;
    }
    const temporaryPath = `${this.jsonPath}.${process.pid}.tmp`;
    writeFileSync(temporaryPath, JSON.stringify(document));
    renameSync(temporaryPath, this.jsonPath);
    return document;
  }

  /** Closes `trace.jsonl` without writing `trace.json` (the run could not finish). Safe to call twice. */
  close(): void {
    if (this.fd === null) return;
    closeSync(this.fd);
    this.fd = null;
  }
}
