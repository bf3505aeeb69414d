import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { collectArtifacts } from '../../src/agent/artifacts.ts';
import { escapeControlCharacters, hasControlCharacters } from '../../src/sandbox/index.ts';
import { createFakeSandbox } from './support/fake-session.ts';

describe('artifact names with control characters', () => {
  it('an artifact named a\\nb.csv never reaches the run folder; the notice shows the name escaped', async () => {
    const bytes = new TextEncoder().encode('x');
    const paths = [
      'a\nb.csv',
      'ok.csv',
      'bell\u0007.txt',
      'esc\u001b[31m.txt',
      'c1\u0085.txt',
      'line\u2028sep.txt',
    ];
    const sandbox = createFakeSandbox({ files: new Map(paths.map((file) => [file, bytes])) });
    const session = await sandbox.factory({});
    const runDir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-artifact-names-'));
    try {
      const collection = await collectArtifacts(
        session,
        paths.map((file) => ({ path: file, change: 'created' as const, sizeBytes: 1 })),
        runDir,
        { remainingBytes: 1000, remainingFiles: 10 },
      );
      expect(collection.saved.map((file) => file.path)).toEqual(['ok.csv']);
      expect(collection.skipped.map((file) => file.path)).toEqual([
        'a\\x0ab.csv',
        'bell\\x07.txt',
        'esc\\x1b[31m.txt',
        'c1\\x85.txt',
        'line\\u2028sep.txt',
      ]);
      expect(collection.skipped.every((file) => !hasControlCharacters(file.path + file.why))).toBe(true);
      expect(await readdir(path.join(runDir, 'artifacts'))).toEqual(['ok.csv']);
    } finally {
      await rm(runDir, { recursive: true, force: true });
    }
  });

  it('escapes only control characters', () => {
    expect(escapeControlCharacters('données/été 2024.csv')).toBe('données/été 2024.csv');
    expect(escapeControlCharacters('a\tb\u007f')).toBe('a\\x09b\\x7f');
  });
});
