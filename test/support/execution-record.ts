import type { ExecutionRecord } from '../../src/trace/index.ts';
import { cellResult } from './cell-result.ts';

/** An execution record of round 1 that printed `stdout`; an `error` one raised a KeyError. */
export function printedExecution(
  outputId: string,
  stdout: string,
  status: 'ok' | 'error' = 'ok',
): ExecutionRecord {
  return {
    type: 'execution',
    round: 1,
    at: '2026-01-01T00:00:00.000Z',
    outputId,
    code: 'print(1)',
    result: cellResult({
      status,
      stdout: { text: stdout, truncated: false, totalBytes: stdout.length },
      ...(status === 'error' ? { error: { name: 'KeyError', value: "'region'", traceback: '' } } : {}),
    }),
    executeText: stdout,
  };
}
