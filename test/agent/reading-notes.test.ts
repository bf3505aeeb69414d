import { describe, expect, it } from 'vitest';
import { formatFirstMessage } from '../../src/agent/first-message.ts';
import { readingNotes } from '../../src/report/reading-notes.ts';
import type { WorkspaceProfile } from '../../src/sandbox/workspace-profile.ts';
import { testProfile } from './support/fake-session.ts';

/** Profile notes once stayed in the trace: they must reach the model's first message and the report. */
const [sales] = testProfile.files;
if (sales === undefined) throw new Error('test profile');
const profile: WorkspaceProfile = {
  truncated: true,
  totalFiles: 2000,
  files: [
    {
      ...sales,
      notes: [
        'The file is not UTF-8: it was decoded as big5.',
        '2 lines of preamble above the header are skipped.',
      ],
    },
    {
      path: 'README.md',
      sizeBytes: 10,
      format: 'text',
      tables: [],
      error: null,
      notes: ['A text file of 2 lines.'],
    },
    {
      path: 'empty.csv',
      sizeBytes: 0,
      format: 'csv',
      tables: [],
      error: 'EmptyFile: the file is empty (0 bytes)',
      notes: [],
    },
  ],
};

describe('reading notes', () => {
  it('are in the first message, with how many files were profiled', () => {
    const message = formatFirstMessage('Describe.', profile);
    expect(message).toContain('"notes":["The file is not UTF-8: it was decoded as big5."');
    expect(message).toContain(
      '(3 of 2000 files profiled: 1997 more in the workspace were not profiled or listed)',
    );
  });

  it('are in the report, with every file that could not be read, and not a text file line count', () => {
    expect(readingNotes(profile)).toEqual([
      { file: 'sales.csv', note: 'The file is not UTF-8: it was decoded as big5.' },
      { file: 'sales.csv', note: '2 lines of preamble above the header are skipped.' },
      { file: 'empty.csv', note: 'could not be read: EmptyFile: the file is empty (0 bytes)' },
      { file: '(workspace)', note: '3 of 2000 files were profiled; the others were not read.' },
    ]);
    expect(readingNotes(null)).toEqual([]);
  });
});
