import { describe, expect, it } from 'vitest';
import { mergeProfileParts, type FileProfile, type WorkspaceProfile } from '../../src/sandbox/index.ts';

const file = (path: string): FileProfile => ({
  path,
  sizeBytes: 10,
  format: 'csv',
  tables: [],
  error: null,
  notes: [],
});
const part = (index: number, paths: string[], listing = 'a'.repeat(64)): WorkspaceProfile => ({
  files: paths.map(file),
  truncated: false,
  totalFiles: 3,
  part: { index, count: 2, listing },
});

describe('mergeProfileParts', () => {
  it('makes the whole profile of parts dealt from one listing, in path order', () => {
    const merged = mergeProfileParts([part(0, ['b.csv']), part(1, ['a.csv', 'c.csv'])]);
    expect(merged).toEqual({
      files: ['a.csv', 'b.csv', 'c.csv'].map(file),
      truncated: false,
      totalFiles: 3,
    });
  });

  it('refuses parts that do not make one whole: the caller profiles the workspace in one session', () => {
    // Kernels that listed different files (one was added between their listings).
    expect(mergeProfileParts([part(0, ['b.csv']), part(1, ['a.csv', 'c.csv'], 'b'.repeat(64))])).toBeNull();
    // A file in two parts.
    expect(mergeProfileParts([part(0, ['a.csv', 'b.csv']), part(1, ['a.csv'])])).toBeNull();
    // A session that ignores `part` (the whole profile each time), or parts out of order.
    const whole: WorkspaceProfile = { files: ['a.csv', 'b.csv', 'c.csv'].map(file), truncated: false };
    expect(mergeProfileParts([whole, whole])).toBeNull();
    expect(mergeProfileParts([part(1, ['b.csv']), part(0, ['a.csv', 'c.csv'])])).toBeNull();
  });
});
