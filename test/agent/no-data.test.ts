import { afterEach, describe, expect, it } from 'vitest';
import { noDataDecision } from '../../src/agent/no-data.ts';
import { exitCodeForTermination } from '../../src/cli/exit-codes.ts';
import type { WorkspaceProfile } from '../../src/sandbox/workspace-profile.ts';
import { testProfile } from './support/fake-session.ts';
import { cleanUpHarness, runLoop } from './support/loop-harness.ts';

afterEach(cleanUpHarness);

const unreadable: WorkspaceProfile = {
  truncated: false,
  files: [
    {
      path: 'empty.csv',
      sizeBytes: 0,
      format: 'csv',
      tables: [],
      error: 'EmptyFile: the file is empty (0 bytes)',
      notes: [],
    },
    {
      path: 'README.md',
      sizeBytes: 30,
      format: 'text',
      tables: [],
      error: null,
      notes: ['A text file of 2 lines.'],
    },
    { path: 'scan.pdf', sizeBytes: 90, format: 'unsupported', tables: [], error: null, notes: [] },
  ],
};

describe('a workspace with nothing readable', () => {
  it('ends no-data before any model turn, naming each file and why, and exits 3', async () => {
    const run = await runLoop({
      server: { script: [{ type: 'text', text: '<Answer>0 tables loaded.</Answer>' }] },
      session: { profile: unreadable },
    });
    expect(run.result.termination.reason).toBe('no-data');
    expect(run.result.answer).toBeNull();
    expect(run.server.completionRequests).toHaveLength(0);
    expect(run.result.termination.detail).toContain('empty.csv: EmptyFile: the file is empty (0 bytes)');
    expect(run.result.termination.detail).toContain('README.md: text, not a table');
    expect(run.result.termination.detail).toContain('scan.pdf: no reader for this kind of file');
    expect(exitCodeForTermination(run.result.termination.reason)).toBe(3);
  });

  it('is not no-data with a header-only table (0 rows × 2 columns is data), nor when the profile failed', () => {
    const headerOnly: WorkspaceProfile = {
      truncated: false,
      files: testProfile.files.map((file) => ({
        ...file,
        tables: file.tables.map((table) => ({ ...table, rows: 0 })),
      })),
    };
    expect(noDataDecision(headerOnly, true)).toBeNull();
    expect(noDataDecision(unreadable, false)).toBeNull();
  });
});
