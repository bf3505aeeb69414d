import path from 'node:path';
import { buildNumberIndex, groundAnswerSegments, groundingSources } from '../report/index.ts';
import type { GroundedSegment } from '../report/index.ts';
import { readTrace, type ExecutionRecord } from '../trace/index.ts';
import type { AnswerGrounding } from './api-schemas.ts';

/**
 * Grounds an answer against every execution the thread's trace holds so far
 * (the report's rules, `src/trace/number-grounding.ts`): the web UI links the
 * numbers from this instead of guessing them itself. Null when the trace
 * cannot be read (the answer is then shown without links).
 */
export async function groundAnswer(runDir: string, answer: string): Promise<AnswerGrounding | null> {
  let executions: ExecutionRecord[];
  try {
    const trace = await readTrace(path.join(runDir, 'trace.jsonl'));
    executions = trace.records.filter((record): record is ExecutionRecord => record.type === 'execution');
  } catch {
    return null;
  }
  const index = buildNumberIndex(groundingSources(executions));
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
