import { createHash } from 'node:crypto';
import type { TraceRecord } from '../../../src/trace/index.ts';

/** A 1×1 transparent PNG: recorded figures keep their place, size and id, not their megabytes. */
export const TINY_PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

/**
 * The tiny PNG, with 8 bytes of `seed`'s SHA-256 after its end (ignored by readers): figures that
 * differed stay different, the same figure stays the same, so the report's check for a figure drawn
 * twice sees what it would have seen in the recorded run.
 */
export function tinyPngFor(seed: string): string {
  const tail = createHash('sha256').update(seed).digest().subarray(0, 8);
  return Buffer.concat([Buffer.from(TINY_PNG_BASE64, 'base64'), tail]).toString('base64');
}

/** A recorded sub-analysis trace made small enough to commit: figures become a tiny PNG, model turns lose their text (the steps keep it). */
export function trimSubTrace(records: readonly TraceRecord[]): TraceRecord[] {
  return records.map((record) => {
    if (record.type === 'execution') {
      return {
        ...record,
        result: {
          ...record.result,
          figures: record.result.figures.map((figure) =>
            'omitted' in figure ? figure : { ...figure, dataBase64: tinyPngFor(figure.dataBase64) },
          ),
        },
      };
    }
    return record;
  });
}
