import type { OutputChunk } from '../sandbox/index.ts';
import type { CapturedText } from '../sandbox/cell-result.ts';

/** Bounds on what a running cell's output becomes as events; the cell's result still holds its full capped output. */
export interface LiveOutputLimits {
  /** Characters of one `execution-output` event at most (a larger piece keeps its tail). Default 8 192. */
  maxEventChars: number;
  /** Characters streamed as events per cell at most; past it the cell's output arrives only with its result. Default 262 144. */
  maxCellChars: number;
  /** Characters of each stream kept for a cell that is cancelled (what the trace then records). Default the sandbox's maxOutputBytes. */
  maxKeptChars: number;
}

export const defaultLiveOutputLimits: Omit<LiveOutputLimits, 'maxKeptChars'> = {
  maxEventChars: 8192,
  maxCellChars: 256 * 1024,
};

interface Kept {
  text: string;
  totalChars: number;
}

/**
 * What a running cell printed so far. The sandbox calls `push` (from its
 * callback, at any rate); the loop takes the pieces that arrived since it last
 * looked, merged per stream, so a flood becomes a few events, not thousands.
 * It also keeps the head of each stream for a cell that never returns a
 * result (cancelled), so what it printed is not lost.
 */
export class LiveCellOutput {
  private pending: OutputChunk[] = [];
  private streamedChars = 0;
  private wake: (() => void) | null = null;
  private readonly kept: Record<OutputChunk['stream'], Kept> = {
    stdout: { text: '', totalChars: 0 },
    stderr: { text: '', totalChars: 0 },
  };

  constructor(private readonly limits: LiveOutputLimits) {}

  /** The sandbox's `onOutput`. Never throws. */
  readonly push = (chunk: OutputChunk): void => {
    if (chunk.text.length === 0) return;
    const kept = this.kept[chunk.stream];
    kept.totalChars += chunk.text.length;
    if (kept.text.length < this.limits.maxKeptChars) {
      kept.text += chunk.text.slice(0, this.limits.maxKeptChars - kept.text.length);
    }
    if (this.streamedChars >= this.limits.maxCellChars) return;
    const text = chunk.text.slice(0, this.limits.maxCellChars - this.streamedChars);
    this.streamedChars += text.length;
    const last = this.pending.at(-1);
    if (last !== undefined && last.stream === chunk.stream) last.text += text;
    else this.pending.push({ stream: chunk.stream, text });
    this.wake?.();
    this.wake = null;
  };

  /** The pieces that arrived since the last call, each within `maxEventChars` (the tail of a larger one). */
  take(): OutputChunk[] {
    const pieces = this.pending.map((piece) =>
      piece.text.length <= this.limits.maxEventChars
        ? piece
        : { stream: piece.stream, text: piece.text.slice(-this.limits.maxEventChars) },
    );
    this.pending = [];
    return pieces;
  }

  /** Resolves when more output arrives. */
  arrival(): Promise<'output'> {
    if (this.pending.length > 0) return Promise.resolve('output');
    return new Promise((resolve) => {
      this.wake = () => resolve('output');
    });
  }

  /** What the cell printed so far, as a result's captured text. */
  captured(stream: OutputChunk['stream']): CapturedText {
    const kept = this.kept[stream];
    return {
      text: kept.text,
      truncated: kept.totalChars > kept.text.length,
      totalBytes: Buffer.byteLength(kept.text) + (kept.totalChars - kept.text.length),
    };
  }
}
