import type { TraceRecord } from '../../../src/trace/index.ts';

/** A 1×1 transparent PNG: recorded figures keep their place, size and id, not their megabytes. */
export const TINY_PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

/** A recorded sub-analysis trace made small enough to commit: figures become a tiny PNG, model turns lose their text (the steps keep it). */
export function trimSubTrace(records: readonly TraceRecord[]): TraceRecord[] {
  return records.map((record) => {
    if (record.type === 'execution') {
      return {
        ...record,
        result: {
          ...record.result,
          figures: record.result.figures.map((figure) =>
            'omitted' in figure ? figure : { ...figure, dataBase64: TINY_PNG_BASE64 },
          ),
        },
      };
    }
    return record;
  });
}
