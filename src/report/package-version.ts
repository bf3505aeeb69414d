import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const versions = new Map<string, string>();

/**
 * The installed version of a dependency, read from its package.json without
 * importing it (vega and vega-lite load in the chart workers, not here).
 * Their `exports` hide package.json, so it is found from the entry point up.
 */
export function installedPackageVersion(name: string): string {
  const known = versions.get(name);
  if (known !== undefined) return known;
  let version = 'unknown';
  try {
    let dir = dirname(require.resolve(name));
    for (;;) {
      const manifest = readManifest(join(dir, 'package.json'));
      if (manifest?.name === name) {
        version = manifest.version ?? version;
        break;
      }
      const parent = dirname(dir);
      if (parent === dir) break;
      dir = parent;
    }
  } catch {
    // Not installed: the provenance says "unknown".
  }
  versions.set(name, version);
  return version;
}

function readManifest(path: string): { name?: string; version?: string } | null {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as { name?: string; version?: string };
  } catch {
    return null;
  }
}
