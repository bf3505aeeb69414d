import { formatBytes, formatDuration } from './format.ts';
import type {
  AgentEvent,
  CellResult,
  DatalystError,
  NoticeKind,
  ReplaySummary,
  StepKind,
  WorkspaceProfile,
} from '../index.ts';
import { clipToWidth } from './clip-to-width.ts';
import {
  createTerminalStyle,
  oneLineForTerminal,
  sanitizeForTerminal,
  type TerminalStyle,
} from './terminal-style.ts';
import { plural } from '../util/plural.ts';

/**
 * Turns agent events into what a person watches. Fed one event at a time and
 * writing through a function, so it runs the same under a terminal, a log file
 * and a test.
 *
 * - live (a terminal): model text streams as it comes, each line behind a
 *   gutter that names and colours its tag; a running cell shows a line with
 *   its elapsed time, redrawn in place.
 * - plain (a pipe, a CI log): whole steps once they end, every line with its
 *   tag in front, no cursor movement; stable to grep.
 * - quiet: errors, warnings and the closing lines only.
 */
export interface ProgressRendererOptions {
  write: (text: string) => void;
  live: boolean;
  color: boolean;
  quiet: boolean;
  /** Width to clip the redrawn line to. Default 100. */
  columns?: number;
  /** Clock for elapsed times. Default `performance.now`. */
  now?: () => number;
  /** Live mode: how often the running-cell line is redrawn. Default 250; 0 draws it once (tests). */
  tickMs?: number;
  /** Shown in round headers (`round 3/30`) when known. */
  maxRounds?: number;
  /** Lines of a cell's stdout shown under its result. Default 6. */
  outputPreviewLines?: number;
  /** Lines of a code step shown; the rest is counted (the report has it all). Default 15. */
  maxCodeLines?: number;
  /** Live mode: lines of a running cell's latest output shown above its status line. Default 3. */
  liveOutputLines?: number;
  /** A conversation (`datalyst chat`): each turn's end gets its closing line. Default false (one run: `run-end` has it). */
  threaded?: boolean;
  /** The built-in offline analyst answers (no language model): its questions back are not said to be a model's. Default false. */
  offline?: boolean;
}

const labelWidth = 10;

/** Notices that tell of something wrong (shown with `!`, also with --quiet); the others are progress. */
const warningNotices: ReadonlySet<NoticeKind> = new Set<NoticeKind>(['warning', 'retry', 'nudge']);

interface StreamingStep {
  key: string;
  tag: StepKind;
  atLineStart: boolean;
  firstLine: boolean;
  /** Whitespace held back: trailing newlines are printed only when more text follows. */
  pending: string;
  chars: number;
  /** Lines started so far, and those left out past the cap. */
  lines: number;
  hiddenLines: number;
  hiding: boolean;
  /** Code only: the line being received, written once it is complete. */
  lineBuffer: string;
}

interface RunningCell {
  outputId: string;
  startedAt: number;
  timer: ReturnType<typeof setInterval> | null;
  /** The end of what the cell printed so far (live mode shows its last lines). */
  tail: string;
}

/** Characters of a running cell's output kept for its live lines. */
const maxTailChars = 4096;

export class ProgressRenderer {
  private readonly style: TerminalStyle;
  private readonly now: () => number;
  private readonly columns: number;
  private readonly tickMs: number;
  private readonly previewLines: number;
  private readonly maxCodeLines: number;
  private streaming: StreamingStep | null = null;
  private running: RunningCell | null = null;
  private statusLineShown = false;
  /** Lines the status block takes (the running cell's output lines and its status line). */
  private statusLines = 0;
  /** Rounds of earlier questions of a thread: round numbers go on across turns, the label counts this turn's. */
  private roundOffset: number | null = null;
  /** Steps already printed in full, so `answer-end` does not print the answer twice. */
  private readonly printedAnswers = new Set<number>();
  private readonly streamedSteps = new Set<string>();

  constructor(private readonly options: ProgressRendererOptions) {
    this.style = createTerminalStyle(options.color);
    this.now = options.now ?? (() => performance.now());
    this.columns = Math.max(40, options.columns ?? 100);
    this.tickMs = options.tickMs ?? 250;
    this.previewLines = options.outputPreviewLines ?? 6;
    this.maxCodeLines = options.maxCodeLines ?? 15;
  }

  /** Who asks in an <Ask>. */
  private get asker(): string {
    return this.options.offline === true ? 'The offline analyst' : 'The model';
  }

  handle(event: AgentEvent): void {
    switch (event.type) {
      case 'run-start':
        this.info(
          `${this.style.bold('Datalyst')} · model ${sanitizeForTerminal(event.modelId)} · run ${event.runId}`,
        );
        this.info(`Instruction: ${sanitizeForTerminal(event.instruction)}`);
        return;
      case 'profile-end':
        this.renderProfile(event.profile);
        return;
      case 'round-start':
        this.endStream();
        if (this.options.quiet) return;
        this.line(
          this.options.live
            ? this.style.dim(`── round ${this.roundLabel(event.round)} ${'─'.repeat(30)}`)
            : `[round ${this.roundLabel(event.round)}]`,
        );
        return;
      case 'text-delta':
        if (this.options.live && !this.options.quiet) this.streamText(event.round, event.tag, event.text);
        return;
      case 'turn-restart':
        this.endStream();
        for (const key of [...this.streamedSteps])
          if (key.startsWith(`${event.round}:`)) this.streamedSteps.delete(key);
        this.warn(
          `The model's reply broke off (${event.reason}); the turn starts over and the text above is void.`,
        );
        return;
      case 'step-end':
        this.endStep(event.round, event.kind, event.text);
        return;
      case 'code-end':
        // The code was shown as it streamed (live) or at its step-end (plain).
        return;
      case 'execution-start':
        this.startCell(event.outputId);
        return;
      case 'execution-output':
        this.cellOutput(event.outputId, event.text);
        return;
      case 'execution-end':
        this.endCell(event.outputId, event.result);
        return;
      case 'ask':
        this.endStream();
        this.result(
          `${this.style.bold(this.style.cyan(`? ${this.asker} asks:`))} ${sanitizeForTerminal(event.question)}`,
        );
        if (event.reply !== null)
          this.info(this.style.dim(`  (no one can answer in this run; it was told: ${event.reply})`));
        return;
      case 'turn-start':
        this.endStream();
        this.roundOffset = null;
        if (event.turn > 1) {
          this.info(
            this.style.bold(
              `${event.replyToAsk ? 'Reply' : 'Question'} ${event.turn}: ${sanitizeForTerminal(event.question)}`,
            ),
          );
        }
        return;
      case 'turn-end':
        if (this.options.threaded === true) this.renderTurnEnd(event.result);
        return;
      case 'replay-start':
        this.info(`Starting a fresh sandbox and replaying ${plural(event.cells, 'recorded cell')}…`);
        return;
      case 'replay-end':
        this.renderReplayEnd(event.summary);
        return;
      case 'artifact-saved':
        this.info(
          `  ${this.style.green('+')} ${sanitizeForTerminal(event.path)} ${this.style.dim(`(${formatBytes(event.sizeBytes)})`)}`,
        );
        return;
      case 'notice':
        // The replay's notice and the fixed reply to an <Ask> repeat what `replay-end` and `ask` printed.
        if (event.kind === 'replay' || event.kind === 'ask-reply') return;
        if (warningNotices.has(event.kind)) this.warn(`${event.kind}: ${event.text}`);
        else this.info(`${event.kind}: ${sanitizeForTerminal(event.text)}`);
        return;
      case 'answer-end':
        if (!this.printedAnswers.has(event.round)) this.endStep(event.round, 'answer', event.answer);
        return;
      case 'run-end':
        this.renderRunEnd(event.result);
        return;
      case 'error':
        this.error(event.error);
        return;
      default: {
        // A new event type must be given a line here: this fails to compile until it is.
        const unhandled: never = event;
        return unhandled;
      }
    }
  }

  /** A line of progress (not shown with --quiet). */
  info(text: string): void {
    if (!this.options.quiet) this.line(text);
  }

  /** Something the person should know even with --quiet. */
  warn(text: string): void {
    this.line(`${this.style.yellow('!')} ${sanitizeForTerminal(text)}`);
  }

  /** An error with its code and fix. */
  error(error: Pick<DatalystError, 'code' | 'message' | 'fix'>): void {
    this.line(`${this.style.red(this.style.bold(`✗ ${error.code}`))} ${sanitizeForTerminal(error.message)}`);
    this.line(`  ${this.style.bold('fix:')} ${sanitizeForTerminal(error.fix)}`);
  }

  /** A closing line that is always shown (where the report is). */
  result(text: string): void {
    this.line(text);
  }

  /** Stops the redraw timer and ends a half-written line. Safe to call twice. */
  close(): void {
    this.stopTimer();
    this.clearStatusLine();
    this.running = null;
    this.endStream();
  }

  /** Once, with a warning marker only when an output differs from the record. */
  private renderReplayEnd(summary: ReplaySummary): void {
    const head = `Replayed ${plural(summary.replayed, 'cell')} in ${formatDuration(summary.durationMs)}`;
    if (summary.mismatches.length === 0) this.info(`${head}: outputs match the record.`);
    else {
      const differ = summary.mismatches.length === 1 ? 'output differs' : 'outputs differ';
      this.warn(`${head}: ${summary.mismatches.length} ${differ} from the record:`);
      for (const item of summary.mismatches)
        this.line(`  ${item.outputId}: ${sanitizeForTerminal(item.detail)}`);
    }
    if (summary.skipped.length > 0) {
      const skipped = summary.skipped.map((item) => `${item.outputId} (${item.detail})`).join('; ');
      this.info(`  Not replayed: ${sanitizeForTerminal(skipped)}.`);
    }
  }

  private roundLabel(round: number): string {
    this.roundOffset ??= round - 1;
    const inTurn = round - this.roundOffset;
    return this.options.maxRounds === undefined ? String(inTurn) : `${inTurn}/${this.options.maxRounds}`;
  }

  // ---- output primitives -------------------------------------------------

  private emit(text: string): void {
    this.clearStatusLine();
    this.options.write(text);
    this.drawStatusLine();
  }

  private line(text: string): void {
    this.endStream();
    this.emit(`${text}\n`);
  }

  // The one-line status ("E3 running · 4.2 s") is drawn by hand rather than with log-update:
  // log-update owns the bottom of the terminal and redraws whole frames, while here the model's
  // text streams in as partial lines between redraws; clearing one line (\r, erase line) before
  // each write and drawing it again after is all the status needs, and stays correct in a pipe.
  private clearStatusLine(): void {
    if (!this.statusLineShown) return;
    this.options.write(`\r\x1b[2K${'\x1b[1A\x1b[2K'.repeat(Math.max(0, this.statusLines - 1))}`);
    this.statusLineShown = false;
    this.statusLines = 0;
  }

  private drawStatusLine(): void {
    if (!this.options.live || this.running === null || this.statusLineShown || this.streaming !== null)
      return;
    const elapsed = formatDuration(this.now() - this.running.startedAt);
    const text = clipToWidth(`  ⏵ ${this.running.outputId} running · ${elapsed}`, this.columns - 1);
    const shown =
      this.running.tail.trim() === ''
        ? []
        : this.running.tail
            .replace(/\s+$/, '')
            .split('\n')
            .slice(-(this.options.liveOutputLines ?? 3))
            .map((line) => this.style.dim(`    ┆ ${clipToWidth(line, this.columns - 7)}`));
    this.options.write(`${shown.map((line) => `${line}\n`).join('')}${this.style.yellow(text)}`);
    this.statusLineShown = true;
    this.statusLines = shown.length + 1;
  }

  // ---- model text --------------------------------------------------------

  private gutter(tag: StepKind, first: boolean): string {
    const color = tagColor(this.style, tag);
    const label = (first ? tag : '').padEnd(labelWidth);
    return `${color(label)}${color(this.options.live ? '│' : '|')} `;
  }

  private streamText(round: number, tag: StepKind, delta: string): void {
    const key = `${round}:${tag}`;
    if (this.streaming?.key !== key) {
      this.endStream();
      this.streaming = newStep(key, tag);
    }
    const step = this.streaming;
    this.streamedSteps.add(key);
    const text = sanitizeForTerminal(delta);
    if (tag !== 'code') {
      this.appendText(step, text);
      return;
    }
    // Code goes out a whole line at a time, so that its ``` fence lines can be left out.
    step.lineBuffer += text;
    const lastNewline = step.lineBuffer.lastIndexOf('\n');
    if (lastNewline === -1) return;
    const complete = step.lineBuffer.slice(0, lastNewline).split('\n');
    step.lineBuffer = step.lineBuffer.slice(lastNewline + 1);
    this.appendText(
      step,
      complete
        .filter((line) => !isFenceLine(line))
        .map((line) => `${line}\n`)
        .join(''),
    );
  }

  /** Writes streamed text; leading whitespace of a step and trailing whitespace (until more text comes) are held back. */
  private appendText(step: StreamingStep, text: string): void {
    let combined = step.pending + text;
    if (step.chars === 0) combined = combined.replace(/^\s+/, '');
    const trailing = /\s*$/.exec(combined)?.[0] ?? '';
    const head = combined.slice(0, combined.length - trailing.length);
    step.pending = trailing;
    if (head === '') return;
    step.chars += head.length;
    this.writeWithGutter(step, head);
  }

  private writeWithGutter(step: StreamingStep, text: string): void {
    const cap = step.tag === 'code' && this.maxCodeLines > 0 ? this.maxCodeLines : Number.POSITIVE_INFINITY;
    let out = '';
    text.split('\n').forEach((part, index) => {
      if (index > 0) {
        if (!step.hiding) out += '\n';
        step.atLineStart = true;
      }
      if (step.atLineStart) {
        step.atLineStart = false;
        step.lines += 1;
        if (step.lines > cap) step.hiding = true;
        if (step.hiding) {
          step.hiddenLines += 1;
          return;
        }
        out += this.gutter(step.tag, step.firstLine);
        step.firstLine = false;
      } else if (step.hiding) {
        return;
      }
      out += step.tag === 'text' ? this.style.dim(part) : part;
    });
    if (out === '') return;
    this.clearStatusLine();
    this.options.write(out);
  }

  /** Ends a block's last line and says how many lines were left out. */
  private finishBlock(step: StreamingStep): void {
    if (!step.atLineStart && !step.hiding) this.options.write('\n');
    if (step.hiddenLines > 0) {
      const noun = step.hiddenLines === 1 ? 'line' : 'lines';
      this.options.write(
        `${this.gutter(step.tag, false)}${this.style.dim(`… ${step.hiddenLines} more ${noun} (the report has the full code)`)}\n`,
      );
    }
  }

  /** Ends a streamed step's line; held-back whitespace is dropped. */
  private endStream(): void {
    const step = this.streaming;
    if (step === null) return;
    if (step.lineBuffer !== '' && !isFenceLine(step.lineBuffer)) this.appendText(step, step.lineBuffer);
    step.lineBuffer = '';
    this.streaming = null;
    this.finishBlock(step);
    this.drawStatusLine();
  }

  private endStep(round: number, kind: StepKind, text: string): void {
    const key = `${round}:${kind}`;
    if (kind === 'answer') this.printedAnswers.add(round);
    if (this.options.quiet) return;
    if (this.options.live && this.streamedSteps.has(key) && this.streaming?.key === key) {
      this.endStream();
      this.streamedSteps.delete(key);
      return;
    }
    this.streamedSteps.delete(key);
    // Plain mode, or a step that arrived without deltas: print it whole.
    const clean = sanitizeForTerminal(text).trim();
    if (clean === '') return;
    this.endStream();
    const block = newStep(key, kind);
    this.writeWithGutter(block, clean);
    this.finishBlock(block);
    this.drawStatusLine();
  }

  // ---- cells -------------------------------------------------------------

  private startCell(outputId: string): void {
    this.endStream();
    this.stopTimer();
    this.running = { outputId, startedAt: this.now(), timer: null, tail: '' };
    if (this.options.quiet) return;
    if (!this.options.live) {
      this.line(`  ${outputId} running…`);
      return;
    }
    this.drawStatusLine();
    if (this.tickMs > 0) {
      const timer = setInterval(() => {
        this.clearStatusLine();
        this.drawStatusLine();
      }, this.tickMs);
      timer.unref();
      this.running.timer = timer;
    }
  }

  /** Live mode: what a running cell prints shows as its last lines above the status line. */
  private cellOutput(outputId: string, text: string): void {
    if (this.running?.outputId !== outputId || !this.options.live || this.options.quiet) return;
    this.running.tail = sanitizeForTerminal(`${this.running.tail}${text}`.slice(-maxTailChars));
    this.clearStatusLine();
    this.drawStatusLine();
  }

  private stopTimer(): void {
    if (this.running?.timer) clearInterval(this.running.timer);
    if (this.running) this.running.timer = null;
  }

  private endCell(outputId: string, result: CellResult): void {
    this.stopTimer();
    this.clearStatusLine();
    this.running = null;
    if (this.options.quiet) return;
    const ok = result.status === 'ok';
    const mark = ok ? this.style.green('✓') : this.style.red('✗');
    const status = ok ? 'ok' : this.style.red(result.status);
    const parts = [
      `${mark} ${outputId} ${status}`,
      formatDuration(result.durationMs),
      ...describeOutputs(result),
    ];
    this.line(`  ${parts.join(' · ')}`);
    if (result.error) {
      this.line(
        `    ${this.style.red(sanitizeForTerminal(`${result.error.name}: ${result.error.value}`).split('\n')[0] ?? '')}`,
      );
    } else if (!ok && result.statusDetail) {
      this.line(`    ${this.style.red(sanitizeForTerminal(result.statusDetail))}`);
    }
    if (result.stateLost)
      this.line(`    ${this.style.yellow('the kernel was restarted: variables and imports are gone')}`);
    this.renderPreview(result.stdout.text);
  }

  private renderPreview(stdout: string): void {
    if (this.previewLines <= 0) return;
    const lines = sanitizeForTerminal(stdout).replace(/\s+$/, '').split('\n');
    if (lines.length === 1 && lines[0] === '') return;
    const width = this.columns - 6;
    for (const text of lines.slice(0, this.previewLines)) {
      const clipped = clipToWidth(text, width);
      this.line(this.style.dim(`    ┆ ${clipped}`));
    }
    if (lines.length > this.previewLines)
      this.line(this.style.dim(`    ┆ … ${lines.length - this.previewLines} more lines`));
  }

  // ---- workspace and run -------------------------------------------------

  private renderProfile(profile: WorkspaceProfile): void {
    const maxNotesPerFile = 3;
    const tables = profile.files.reduce((sum, file) => sum + file.tables.length, 0);
    // Counted as the workspace check counts ("21 data files"): text and unsupported files are said apart.
    const texts = profile.files.filter((file) => file.format === 'text').length;
    const unsupported = profile.files.filter((file) => file.format === 'unsupported').length;
    const data = profile.files.length - texts - unsupported;
    const files =
      texts + unsupported === 0
        ? plural(data, 'data file')
        : `${plural(profile.files.length, 'file')} (${[
            plural(data, 'data file'),
            ...(texts > 0 ? [plural(texts, 'text file')] : []),
            ...(unsupported > 0 ? [`${unsupported} unsupported`] : []),
          ].join(', ')})`;
    this.info(`Workspace profiled: ${files}, ${plural(tables, 'table')}`);
    const shownFiles = 12;
    // "the other files are still analysed" only when another file gave a table.
    const anyReadable = profile.files.some((file) => file.tables.length > 0);
    for (const file of profile.files.slice(0, shownFiles)) {
      const name = oneLineForTerminal(file.path);
      if (file.error !== null) {
        this.warn(
          `${name}: could not be read (${oneLineForTerminal(file.error)})${anyReadable ? '; the other files are still analysed' : ''}`,
        );
      } else if (file.format === 'unsupported') {
        this.info(`  ${this.style.dim(`- ${name}: unsupported type, skipped`)}`);
      } else {
        const shapes = file.tables
          .slice(0, 3)
          .map(
            (table) =>
              `${table.name ? `${oneLineForTerminal(table.name)} ` : ''}${table.rows}×${table.columns.length}`,
          )
          .join(', ');
        const more = file.tables.length > 3 ? `, +${file.tables.length - 3}` : '';
        this.info(
          `  ${name} ${this.style.dim(`${file.format} · ${formatBytes(file.sizeBytes)}${shapes ? ` · ${shapes}${more}` : ''}`)}`,
        );
      }
      // How the file was read (encoding fallback, preamble, no header, identifiers, dates): the person sees it too.
      for (const note of file.notes.slice(0, maxNotesPerFile)) {
        if (file.format !== 'text') this.info(`    ${this.style.dim(`note: ${oneLineForTerminal(note)}`)}`);
      }
    }
    if (profile.truncated) {
      const total = profile.totalFiles ?? null;
      this.warn(
        total !== null && total > profile.files.length
          ? `${profile.files.length} of ${total} files profiled; the others are listed, not read`
          : `Only the first ${profile.files.length} files were profiled; the others are listed, not read`,
      );
    }
    if (profile.files.length > shownFiles)
      this.info(this.style.dim(`  … ${profile.files.length - shownFiles} more files`));
    for (const file of profile.files.slice(shownFiles)) {
      if (file.error !== null)
        this.warn(`${sanitizeForTerminal(file.path)}: could not be read (${file.error})`);
    }
  }

  private renderTurnEnd(result: Extract<AgentEvent, { type: 'turn-end' }>['result']): void {
    this.close();
    const facts = `${plural(result.rounds, 'round')} · ${formatDuration(result.durationMs)}`;
    const reason = result.termination.reason;
    if (reason === 'answered') this.result(`${this.style.green(this.style.bold('✓ Answered'))} in ${facts}`);
    else if (reason === 'asked') this.result(this.style.cyan(`${this.asker} waits for your reply.`));
    else if (reason === 'cancelled')
      this.result(`${this.style.yellow(this.style.bold('■ Turn cancelled'))} after ${facts}`);
    else this.result(`${this.style.red(this.style.bold(`✗ No answer (${reason})`))} after ${facts}`);
    if (result.termination.detail && reason !== 'answered' && reason !== 'asked')
      this.result(`  ${sanitizeForTerminal(result.termination.detail)}`);
  }

  private renderRunEnd(result: Extract<AgentEvent, { type: 'run-end' }>['result']): void {
    this.close();
    const tokens =
      result.usage.promptTokens + result.usage.completionTokens > 0
        ? ` · ${result.usage.promptTokens} + ${result.usage.completionTokens} tokens`
        : '';
    const facts = `${plural(result.rounds, 'round')} · ${formatDuration(result.durationMs)}${tokens}`;
    const reason = result.termination.reason;
    // A re-run that stopped still shows the earlier answer, its numbers carried over (`rerun`'s result says so).
    const carriedOver =
      'answerSource' in result && result.answerSource === 'carried-over' && result.answer !== null;
    if (reason === 'answered' && carriedOver && result.rounds === 0) {
      // A re-run asks no model: its answer is the earlier one, carried over ("Answered in 0 rounds" said otherwise).
      this.result(
        `${this.style.green(this.style.bold('✓ Re-ran the recorded cells'))}; the earlier answer is carried over to the new outputs · ${formatDuration(result.durationMs)}`,
      );
    } else if (reason === 'answered') {
      this.result(`${this.style.green(this.style.bold('✓ Answered'))} in ${facts}`);
    } else if (reason === 'cancelled') {
      this.result(`${this.style.yellow(this.style.bold('■ Cancelled'))} after ${facts}`);
    } else if (carriedOver) {
      this.result(`${this.style.red(this.style.bold(`✗ Stopped (${reason})`))} after ${facts}`);
    } else {
      this.result(
        `${this.style.red(this.style.bold(`✗ Stopped without an answer (${reason})`))} after ${facts}`,
      );
    }
    if (carriedOver && reason !== 'answered') {
      this.result(
        reason === 'model-unavailable'
          ? "  The model's rewrite of the answer failed: the answer shown is the earlier one, with its numbers carried over to the new outputs."
          : '  The answer shown is the earlier one, with its numbers carried over to the new outputs (not a new answer).',
      );
    }
    if (result.termination.detail && reason !== 'answered')
      this.result(`  ${sanitizeForTerminal(result.termination.detail)}`);
  }
}

function isFenceLine(line: string): boolean {
  return /^\s*```[\w+-]*\s*$/.test(line);
}

function newStep(key: string, tag: StepKind): StreamingStep {
  return {
    key,
    tag,
    atLineStart: true,
    firstLine: true,
    pending: '',
    chars: 0,
    lines: 0,
    hiddenLines: 0,
    hiding: false,
    lineBuffer: '',
  };
}

function tagColor(style: TerminalStyle, tag: StepKind): (text: string) => string {
  switch (tag) {
    case 'analyze':
      return style.blue;
    case 'understand':
      return style.magenta;
    case 'code':
      return style.cyan;
    case 'answer':
      return (text: string) => style.bold(style.green(text));
    case 'ask':
      return (text: string) => style.bold(style.cyan(text));
    case 'text':
      return style.gray;
  }
}

function describeOutputs(result: CellResult): string[] {
  const parts: string[] = [];
  if (result.figures.length > 0) parts.push(plural(result.figures.length, 'figure'));
  if (result.charts.length > 0) parts.push(plural(result.charts.length, 'chart'));
  if (result.tables.length > 0) parts.push(plural(result.tables.length, 'table'));
  if (result.files.length > 0) {
    const names = result.files.slice(0, 3).map((file) => sanitizeForTerminal(file.path));
    parts.push(`files: ${names.join(', ')}${result.files.length > 3 ? ` +${result.files.length - 3}` : ''}`);
  }
  return parts;
}
