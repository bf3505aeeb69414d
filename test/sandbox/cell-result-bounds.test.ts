import { describe, expect, it } from 'vitest';
import { MAX_ERROR_TEXT_CHARS, MAX_FIGURE_SIDE_PX, cellResultSchema } from '../../src/sandbox/cell-result.ts';
import { workspaceProfileSchema } from '../../src/sandbox/workspace-profile.ts';
import { cellResult } from '../support/cell-result.ts';
import { csvReadOptions } from '../support/read-options.ts';

/**
 * The host's second line of defence: a kernel message whose texts are not
 * bounded, or whose figure is not what it claims, breaks the protocol
 * instead of reaching the model, the trace or the report.
 */

const figure = {
  id: 'figure-1-1',
  mimeType: 'image/png' as const,
  dataBase64: 'iVBORw0KGgo=',
  widthPx: 640,
  heightPx: 480,
};

describe('cell result bounds', () => {
  it('accepts what the kernel sends', () => {
    const error = { name: 'ValueError', value: 'v'.repeat(70_000), traceback: 't'.repeat(70_000) };
    expect(
      cellResultSchema.safeParse(cellResult({ status: 'error', error, figures: [figure] })).success,
    ).toBe(true);
  });

  it('refuses an unclipped error value or traceback (a 30-million-character message)', () => {
    const huge = 'v'.repeat(MAX_ERROR_TEXT_CHARS + 1);
    for (const error of [
      { name: 'ValueError', value: huge, traceback: '' },
      { name: 'ValueError', value: '', traceback: huge },
    ]) {
      expect(cellResultSchema.safeParse(cellResult({ status: 'error', error })).success).toBe(false);
    }
  });

  it('refuses an unclipped table label or echoed value', () => {
    const table = {
      id: 'table-1-1',
      columns: ['c'.repeat(5_000)],
      index: ['0'],
      rows: [[1]],
      totalRows: 1,
      totalColumns: 1,
      truncated: false,
    };
    expect(cellResultSchema.safeParse(cellResult({ tables: [table] })).success).toBe(false);
    expect(cellResultSchema.safeParse(cellResult({ value: 'x'.repeat(300 * 1024) })).success).toBe(false);
  });

  it('refuses a figure that is not base64, has a long or unsafe id, or is larger than matplotlib can draw', () => {
    for (const bad of [
      { ...figure, dataBase64: 'PHNjcmlwdD4=" onerror="x' },
      { ...figure, dataBase64: 'abc' },
      { ...figure, id: 'f'.repeat(101) },
      { ...figure, id: '../figure' },
      { ...figure, widthPx: MAX_FIGURE_SIDE_PX + 1 },
    ]) {
      expect(cellResultSchema.safeParse(cellResult({ figures: [bad] })).success).toBe(false);
    }
  });

  it('refuses an unclipped column name in a workspace profile', () => {
    const column = {
      name: 'h'.repeat(5_000_000),
      dtype: 'int64',
      kind: 'integer' as const,
      missing: 0,
      unique: 2,
      samples: ['1'],
      min: '1',
      max: '3',
    };
    const read = csvReadOptions();
    const profile = (name: string) => ({
      files: [
        {
          path: 'wide.csv',
          sizeBytes: 10,
          format: 'csv' as const,
          tables: [
            {
              name: '',
              rows: 2,
              columns: [{ ...column, name }],
              columnsTruncated: false,
              read,
              loadCode: "pd.read_csv('wide.csv')",
            },
          ],
          error: null,
          notes: [],
        },
      ],
      truncated: false,
    });
    expect(workspaceProfileSchema.safeParse(profile('h'.repeat(1000))).success).toBe(true);
    expect(workspaceProfileSchema.safeParse(profile('h'.repeat(5_000_000))).success).toBe(false);
  });
});
