import {
  closeSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { ConfigError, TraceError } from '../errors/index.ts';
import { TRACE_VERSION, traceRecordSchema, type TraceRecord } from './schema.ts';

export interface TraceWriterOptions {
  /**
   * When to fsync `trace.jsonl`: after every record (`record`, survives a power
   * cut at the price of a disk flush per record), or only on `finish()`
   * (`finish`, the default: a killed process still leaves every written line,
   * since each append is one write(2) into the page cache).
   */
  sync?: 'record' | 'finish';
}

// Bytes copied at a time from trace.jsonl into trace.json.
const copyChunkBytes = 1024 * 1024;
const newline = 0x0a;
const comma = 0x2c;

function writeAll(fd: number, bytes: Uint8Array): void {
  let offset = 0;
  while (offset < bytes.byteLength) offset += writeSync(fd, bytes, offset);
}

/** Bytes up to and including the last line break: the whole records of a trace.jsonl. */
function lengthOfWholeLines(fd: number, size: number): number {
  const chunk = Buffer.alloc(64 * 1024);
  let end = size;
  while (end > 0) {
    const start = Math.max(0, end - chunk.byteLength);
    const length = readSync(fd, chunk, 0, end - start, start);
    const index = chunk.subarray(0, length).lastIndexOf(newline);
    if (index !== -1) return start + index + 1;
    end = start;
  }
  return 0;
}

/**
 * Appends a run's trace to `<runDir>/trace.jsonl`, one validated record per
 * line, as the run goes on. Each record is written with a single synchronous
 * write on an O_APPEND descriptor, so a crash or a kill leaves whole lines up to
 * the last record (at worst a torn last line, which readers skip). Earlier
 * records are never rewritten. `finish()` also writes `trace.json`, the same
 * records in one document, atomically (temporary file and rename).
 *
 * Records are not kept in memory: a run with many large figures would
 * otherwise hold them all twice (the objects and the document's string).
 * `trace.json` is copied from `trace.jsonl` a chunk at a time.
 */
export class TraceWriter {
  readonly jsonlPath: string;
  readonly jsonPath: string;
  private fd: number | null;
  private readonly syncEachRecord: boolean;
  /** Bytes of `trace.jsonl` that hold whole records (what `trace.json` is made of). */
  private recordBytes = 0;
  private documentAttempted = false;

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

  /**
   * Reopens the `trace.jsonl` of an earlier run or thread to add records to it
   * (a thread that resumes). A torn last line, left by a process that was
   * killed while appending, is cut off first, so the next record starts on a
   * line of its own. Throws TraceError when there is no trace to reopen.
   */
  static reopen(runDir: string, options: TraceWriterOptions = {}): TraceWriter {
    const jsonlPath = path.join(runDir, 'trace.jsonl');
    let fd: number;
    try {
      fd = openSync(jsonlPath, 'r+');
    } catch (error) {
      throw new TraceError(`Cannot reopen the trace at ${jsonlPath}.`, error);
    }
    try {
      const size = fstatSync(fd).size;
      const wholeBytes = lengthOfWholeLines(fd, size);
      if (wholeBytes < size) ftruncateSync(fd, wholeBytes);
      closeSync(fd);
      const appendFd = openSync(jsonlPath, 'a');
      const writer = new TraceWriter(runDir, appendFd, options);
      writer.recordBytes = wholeBytes;
      return writer;
    } catch (error) {
      try {
        closeSync(fd);
      } catch {
        // Already closed above.
      }
      throw new TraceError(`Cannot reopen the trace at ${jsonlPath}.`, error);
    }
  }

  /**
   * Validates one record and appends it as one line. Throws TraceError on a
   * record that breaks the schema, or when the line cannot be written (a full
   * disk); then nothing of it stays in the file.
   */
  append(record: TraceRecord): void {
    if (this.fd === null) throw new TraceError('The trace is already finished; no record can be added.');
    const parsed = traceRecordSchema.safeParse(record);
    if (!parsed.success) {
      throw new TraceError(
        `Refusing to write a ${record.type} record that breaks the trace schema.`,
        parsed.error,
      );
    }
    // JSON.stringify escapes line breaks inside strings: a raw newline only ever ends a record.
    const line = Buffer.from(`${JSON.stringify(parsed.data)}\n`, 'utf8');
    try {
      writeAll(this.fd, line);
      if (this.syncEachRecord) fsyncSync(this.fd);
    } catch (error) {
      // A half-written line in the middle would make every later line unreadable: take it back.
      try {
        ftruncateSync(this.fd, this.recordBytes);
      } catch {
        // The file keeps a torn last line, which readers skip.
      }
      throw new TraceError(`Could not write a ${record.type} record to ${this.jsonlPath}.`, error);
    }
    this.recordBytes += line.byteLength;
  }

  /**
   * Writes `trace.json` (the records of `trace.jsonl` in one document), then
   * flushes and closes `trace.jsonl`. Safe to call twice. When `trace.json`
   * cannot be written it throws TraceError and leaves `trace.jsonl` open, so
   * the caller can still record why; the next call only closes it.
   */
  finish(): void {
    const fd = this.fd;
    if (fd === null) return;
    if (!this.documentAttempted) {
      this.documentAttempted = true;
      try {
        this.writeDocument();
      } catch (error) {
        throw new TraceError(`Could not write ${this.jsonPath}; trace.jsonl holds the whole trace.`, error);
      }
    }
    this.fd = null;
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Closes and removes a `trace.jsonl` to which nothing was written (a thread
   * opened and closed without a question), so the folder does not look like
   * a broken run. Does nothing once a record was written.
   */
  discardIfEmpty(): void {
    const fd = this.fd;
    if (fd === null || this.recordBytes > 0) return;
    this.fd = null;
    closeSync(fd);
    rmSync(this.jsonlPath, { force: true });
  }

  /**
   * Closes `trace.jsonl` as it stands, writing no more records and no
   * `trace.json`: for a run stopped by a bug in Datalyst, where no end record
   * would be true (readers take the trace as a crash leaves it). The lines
   * written so far are flushed and kept. Never throws (it runs where an error
   * is already on its way up); does nothing once finished or abandoned.
   */
  abandon(): void {
    const fd = this.fd;
    if (fd === null) return;
    this.fd = null;
    try {
      fsyncSync(fd);
    } catch {
      // The lines are in the page cache all the same; closing is what matters here.
    }
    try {
      closeSync(fd);
    } catch {
      // Nothing else can be done about a descriptor that does not close.
    }
  }

  /** Copies the whole records of trace.jsonl into trace.json: each line break becomes a comma. */
  private writeDocument(): void {
    const temporaryPath = `${this.jsonPath}.${process.pid}.tmp`;
    const readFd = openSync(this.jsonlPath, 'r');
    let writeFd: number | null = null;
    try {
      writeFd = openSync(temporaryPath, 'w');
      writeAll(writeFd, Buffer.from(`{"version":${TRACE_VERSION},"records":[`, 'utf8'));
      const chunk = Buffer.alloc(Math.min(copyChunkBytes, Math.max(1, this.recordBytes)));
      // The last byte is the last record's line break: it closes the array instead.
      const bytesToCopy = Math.max(0, this.recordBytes - 1);
      let position = 0;
      while (position < bytesToCopy) {
        const length = readSync(
          readFd,
          chunk,
          0,
          Math.min(chunk.byteLength, bytesToCopy - position),
          position,
        );
        if (length === 0) throw new Error(`${this.jsonlPath} is shorter than the records written to it.`);
        const piece = chunk.subarray(0, length);
        // A newline byte never occurs inside a UTF-8 sequence, so this cannot split a character.
        for (let index = piece.indexOf(newline); index !== -1; index = piece.indexOf(newline, index + 1)) {
          piece[index] = comma;
        }
        writeAll(writeFd, piece);
        position += length;
      }
      writeAll(writeFd, Buffer.from(']}', 'utf8'));
      fsyncSync(writeFd);
      closeSync(writeFd);
      writeFd = null;
      renameSync(temporaryPath, this.jsonPath);
    } catch (error) {
      if (writeFd !== null) closeSync(writeFd);
      try {
        rmSync(temporaryPath, { force: true });
      } catch {
        // A leftover *.tmp file is harmless; the error that matters is the one thrown.
      }
      throw error;
    } finally {
      closeSync(readFd);
    }
  }
}
