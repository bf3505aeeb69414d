import type { CellResult } from '../sandbox/cell-result.ts';
import type { NoticeKind, RunEndRecord, TraceCellResult, TraceRecord } from '../trace/schema.ts';
import { TraceWriter } from '../trace/writer.ts';
import { errorText } from './clip-text.ts';
import type { AgentEvent } from './events.ts';
import { TraceFigureBudget, type OmittedOutputs } from './trace-figure-budget.ts';
import { plural } from '../util/plural.ts';

export interface TraceRecorderOptions {
  /** `record` fsyncs the trace after every record. Default `finish`. */
  sync?: 'record' | 'finish';
  /** Bytes of figures and charts kept in the trace per run. */
  maxFigureBytes: number;
}

const nowIso = () => new Date().toISOString();

/** An error's message and its cause's (the system error under a TraceError), clipped. */
function withCause(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined;
  return cause === undefined ? errorText(error) : `${errorText(error)} (${errorText(cause)})`;
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/**
 * The run's side of the trace: records what the loop does, as it goes, in the
 * shapes the loop needs (a notice that is also an event, an execution within
 * the run's figure cap, an ending that never throws).
 */
export class TraceRecorder {
  private readonly figureBudget: TraceFigureBudget;

  private constructor(
    private readonly writer: TraceWriter,
    maxFigureBytes: number,
  ) {
    this.figureBudget = new TraceFigureBudget(maxFigureBytes);
  }

  /** Opens `<outDir>/trace.jsonl`; throws ConfigError when the folder already holds a trace. */
  static open(outDir: string, options: TraceRecorderOptions): TraceRecorder {
    const writer = TraceWriter.open(outDir, options.sync === undefined ? {} : { sync: options.sync });
    return new TraceRecorder(writer, options.maxFigureBytes);
  }

  /** Reopens the trace of an earlier run or thread to add to it (a thread that resumes). */
  static reopen(outDir: string, options: TraceRecorderOptions): TraceRecorder {
    const writer = TraceWriter.reopen(outDir, options.sync === undefined ? {} : { sync: options.sync });
    return new TraceRecorder(writer, options.maxFigureBytes);
  }

  get tracePath(): string {
    return this.writer.jsonlPath;
  }

  append(record: TraceRecord): void {
    this.writer.append(record);
  }

  /** Records a notice and returns it as an event. */
  notice(round: number, kind: NoticeKind, text: string): AgentEvent {
    this.writer.append({ type: 'notice', at: nowIso(), round, kind, text });
    return { type: 'notice', round, kind, text };
  }

  /**
   * Records one executed cell, its figures and charts within the run's cap;
   * returns a notice event when some were left out of the trace.
   */
  execution(
    round: number,
    outputId: string,
    code: string,
    result: CellResult,
    executeText: string,
  ): AgentEvent | null {
    const kept = this.figureBudget.keep(result);
    this.writer.append({
      type: 'execution',
      round,
      at: nowIso(),
      outputId,
      code,
      result: kept.result,
      executeText,
    });
    if (kept.omitted.figures + kept.omitted.charts === 0) return null;
    return this.notice(round, 'warning', this.omissionText(outputId, kept.omitted));
  }

  /** Records a cell stopped by a cancel, with what it printed so far (it has no figures). Never throws. */
  cancelledExecution(round: number, outputId: string, code: string, result: TraceCellResult): void {
    try {
      this.writer.append({ type: 'execution', round, at: nowIso(), outputId, code, result, executeText: '' });
    } catch {
      // The cancel is what matters now; the trace keeps what it could.
    }
  }

  private omissionText(outputId: string, omitted: OmittedOutputs): string {
    const what = [
      omitted.figures > 0 ? plural(omitted.figures, 'figure') : '',
      omitted.charts > 0 ? plural(omitted.charts, 'chart') : '',
    ]
      .filter((part) => part !== '')
      .join(' and ');
    return (
      `${what} of ${outputId} (${formatBytes(omitted.bytes)}) not kept in the trace: ` +
      `the run's cap of ${formatBytes(this.figureBudget.maxBytes)} of figures and charts is spent.`
    );
  }

  /**
   * Appends `run-end` and writes `trace.json`. Never throws: the run must
   * still end with its `run-end` event. A failure becomes a notice, in
   * `trace.jsonl` when it can still be written, and in the events returned.
   */
  end(record: Omit<RunEndRecord, 'type'>): AgentEvent[] {
    const problems: AgentEvent[] = [];
    try {
      this.writer.append({ type: 'run-end', ...record });
    } catch (error) {
      problems.push(
        this.warnIfPossible(record.rounds, `The run-end record could not be written: ${withCause(error)}`),
      );
    }
    try {
      this.writer.finish();
    } catch (error) {
      problems.push(this.warnIfPossible(record.rounds, withCause(error)));
      try {
        this.writer.finish();
      } catch {
        // Closing trace.jsonl failed as well: the lines written so far are all there is.
      }
    }
    return problems;
  }

  /** Closes the trace as it stands, with no run-end: after a bug in Datalyst, no termination is true. Never throws. */
  abandon(): void {
    this.writer.abandon();
  }

  /** Removes the trace file when nothing was recorded (a thread closed before its first question). */
  discardIfEmpty(): void {
    this.writer.discardIfEmpty();
  }

  /** A warning notice that never throws: for cleanup paths, where a throw would skip the run's end. */
  warnIfPossible(round: number, text: string): AgentEvent {
    try {
      return this.notice(round, 'warning', text);
    } catch {
      return { type: 'notice', round, kind: 'warning', text };
    }
  }
}
