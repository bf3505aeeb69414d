import path from 'node:path';
import { buildNumberIndex, groundAnswerSegments } from '../report/index.ts';
import type { GroundedSegment } from '../report/index.ts';
import {
  groundingSource,
  groundingSources,
  readTrace,
  type ExecutionRecord,
  type GroundedResult,
  type GroundingSource,
} from '../trace/index.ts';
import type { AnswerGrounding } from './api-schemas.ts';

/**
 * Grounds a thread's answers against every execution it holds so far (the
 * report's rules, `src/trace/number-grounding.ts`): the web UI links the
 * numbers from this instead of guessing them itself.
 *
 * The executions recorded before the server opened the thread are read from
 * its trace once; later ones are added as their cells end. (Reading the whole
 * trace at every answer cost each follow-up about 20 ms on a short thread and
 * grew with the thread: `bench:server`.)
 */
export class AnswerGrounder {
  readonly #runDir: string;
  #sources: Promise<GroundingSource[] | null> | null;

  /** `resumed`: the run folder already holds a trace (a new thread's first turn has none to read). */
  constructor(runDir: string, resumed: boolean) {
    this.#runDir = runDir;
    this.#sources = resumed ? null : Promise.resolve([]);
  }

  /** Before the thread's first turn in this process: what the trace already holds. */
  start(): void {
    this.#sources ??= readRecordedSources(this.#runDir);
  }

  /** A cell ended: its output grounds later answers. */
  add(outputId: string, result: GroundedResult): void {
    this.start();
    this.#sources = this.#sources!.then((sources) =>
      sources === null ? null : [...sources, groundingSource(outputId, result)],
    );
  }

  /** Null when the trace could not be read (the answer is then shown without links). */
  async ground(answer: string): Promise<AnswerGrounding | null> {
    this.start();
    const sources = await this.#sources!;
    if (sources === null) return null;
    const index = buildNumberIndex(sources);
    return {
      segments: groundAnswerSegments(answer, index).map((segment: GroundedSegment) => ({
        text: segment.text,
        numbers: segment.numbers.map(({ text, start, end, verified, outputId, matchedText }) => ({
          text,
          start,
          end,
          verified,
          outputId,
          matchedText,
        })),
      })),
    };
  }
}

async function readRecordedSources(runDir: string): Promise<GroundingSource[] | null> {
  try {
    const trace = await readTrace(path.join(runDir, 'trace.jsonl'));
    return groundingSources(
      trace.records.filter((record): record is ExecutionRecord => record.type === 'execution'),
    );
  } catch {
    return null;
  }
}
