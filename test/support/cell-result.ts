import type { CellResult } from '../../src/sandbox/index.ts';

/** A cell result for tests: an empty, successful cell unless overridden. */
export function cellResult(overrides: Partial<CellResult> = {}): CellResult {
  return {
    status: 'ok',
    stdout: { text: '', truncated: false, totalBytes: 0 },
    stderr: { text: '', truncated: false, totalBytes: 0 },
    error: null,
    value: null,
    figures: [],
    charts: [],
    tables: [],
    files: [],
    durationMs: 1,
    stateLost: false,
    statusDetail: null,
    ...overrides,
  };
}
