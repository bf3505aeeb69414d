import { describe, expect, it } from 'vitest';
import { vanishedColumns } from '../../src/agent/rerun/vanished-columns.ts';
import type { WorkspaceProfile } from '../../src/sandbox/index.ts';
import { printedExecution as execution } from '../support/execution-record.ts';
import { csvReadOptions } from '../support/read-options.ts';

function profileOf(columns: readonly string[]): WorkspaceProfile {
  return {
    files: [
      {
        path: 'orders.csv',
        sizeBytes: 100,
        format: 'csv',
        error: null,
        notes: [],
        tables: [
          {
            name: '',
            rows: 3,
            columnsTruncated: false,
            loadCode: "pd.read_csv('orders.csv')",
            read: csvReadOptions(),
            columns: columns.map((name) => ({
              name,
              dtype: 'int64',
              kind: 'integer',
              missing: 0,
              unique: 3,
              samples: [],
              min: null,
              max: null,
            })),
          },
        ],
      },
    ],
    truncated: false,
  };
}

describe('a column the carried-over answer names that the new data no longer has', () => {
  const answer = '`units` ranges from 2 to 12 (mean 5.16); `region` has 4 distinct values; `North` leads.';
  const before = [
    execution('E1', 'loaded'),
    execution('E2', '- `units` ranges from 2 to 12 (mean 5.16)\nregion: North 31.1%'),
  ];

  it('is found when the renamed column (units → quantity) is printed by no new output (the analyst found its columns by itself, so no cell failed)', () => {
    const after = [
      execution('E1', 'loaded'),
      execution('E2', '- `quantity` ranges from 2 to 12 (mean 5.16)\nregion: North 31.1%'),
    ];
    expect(
      vanishedColumns(
        answer,
        profileOf(['units', 'region']),
        profileOf(['quantity', 'region']),
        before,
        after,
      ),
    ).toEqual([{ name: 'units', outputId: 'E2' }]);
  });

  it('is not found when the columns are the same, for a value that is not a column, or without the earlier profile', () => {
    const after = [execution('E1', 'loaded'), execution('E2', 'region: East 40.0%')];
    // `units` is still a column of the new data; `North` (gone from the outputs) is a value, not a column.
    expect(
      vanishedColumns(answer, profileOf(['units', 'region']), profileOf(['units', 'region']), before, after),
    ).toEqual([]);
    expect(vanishedColumns(answer, null, profileOf(['quantity', 'region']), before, after)).toEqual([]);
  });
});
