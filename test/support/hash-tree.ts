import { createHash } from 'node:crypto';
import { readFile, readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';

/** SHA-256 of every regular file under `dir`, by relative path: to show the user's files were not changed. */
export async function hashTree(dir: string): Promise<Map<string, string>> {
  const hashes = new Map<string, string>();
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    hashes.set(
      relative(dir, path),
      createHash('sha256')
        .update(await readFile(path))
        .digest('hex'),
    );
  }
  return hashes;
}
