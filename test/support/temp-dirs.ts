import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';

export interface TempDirs {
  /** A new folder under the system's temporary folder, its name starting with `prefix`. */
  make(prefix: string): Promise<string>;
}

/** The temporary folders of one test file, all removed after its tests. Call it at the file's top level. */
export function useTempDirs(): TempDirs {
  const made: string[] = [];
  afterAll(async () => {
    await Promise.all(made.map((dir) => rm(dir, { recursive: true, force: true })));
  });
  return {
    async make(prefix) {
      const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
      made.push(dir);
      return dir;
    },
  };
}
