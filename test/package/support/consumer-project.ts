import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';

const lockEntrySchema = z.looseObject({ version: z.string().optional(), dev: z.boolean().optional() });
const lockSchema = z.looseObject({ packages: z.record(z.string(), lockEntrySchema) });
const manifestSchema = z.looseObject({
  version: z.string(),
  dependencies: z.record(z.string(), z.string()),
  bin: z.record(z.string(), z.string()),
  engines: z.record(z.string(), z.string()),
});

/**
 * The registry URL of a locked package's tarball. This clone's lock leaves it
 * out (npm then asks the registry's metadata where the tarball is, which an
 * offline install cannot); with it npm takes the tarball from its cache by
 * the lock's integrity.
 */
function registryTarball(location: string, version: string | undefined): { resolved?: string } {
  const name = location.slice(location.lastIndexOf('node_modules/') + 'node_modules/'.length);
  if (version === undefined) return {};
  const base = name.slice(name.lastIndexOf('/') + 1);
  return { resolved: `https://registry.npmjs.org/${name}/-/${base}-${version}.tgz` };
}

/**
 * Writes package.json and package-lock.json of a new project that depends on
 * the packed tarball (and on @types/node, as any Node TypeScript project
 * does), so that `npm ci --offline` installs it from npm's cache alone: npm
 * resolves version ranges from registry metadata, which the cache may not
 * hold, but installs a complete lock (resolved URL and integrity) from cached
 * tarballs. The dependency
 * tree is this clone's lock less its development-only packages: what a user
 * of the same release resolves.
 */
export async function writeConsumerProject(options: {
  projectRoot: string;
  consumerDir: string;
  tarballPath: string;
  tarballIntegrity: string;
}): Promise<void> {
  const { projectRoot, consumerDir } = options;
  const manifest = manifestSchema.parse(
    JSON.parse(await readFile(path.join(projectRoot, 'package.json'), 'utf8')),
  );
  const lock = lockSchema.parse(
    JSON.parse(await readFile(path.join(projectRoot, 'package-lock.json'), 'utf8')),
  );
  const tarball = `file:${path.relative(consumerDir, options.tarballPath)}`;
  const nodeTypes = lock.packages['node_modules/@types/node'];
  if (nodeTypes?.version === undefined) throw new Error('@types/node is not in package-lock.json');
  const dependencies = { datalyst: tarball, '@types/node': nodeTypes.version };
  const packages: Record<string, unknown> = {
    '': { name: 'consumer', dependencies },
    'node_modules/datalyst': {
      version: manifest.version,
      resolved: tarball,
      integrity: options.tarballIntegrity,
      dependencies: manifest.dependencies,
      bin: manifest.bin,
      engines: manifest.engines,
    },
  };
  // Development-only packages stay out, except @types/node and what it needs.
  const kept = new Set(['node_modules/@types/node', 'node_modules/undici-types']);
  for (const [location, entry] of Object.entries(lock.packages)) {
    if (location === '' || (entry.dev === true && !kept.has(location))) continue;
    const { dev: _dev, ...rest } = entry;
    packages[location] = { ...rest, ...registryTarball(location, entry.version) };
  }
  await writeFile(
    path.join(consumerDir, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, type: 'module', dependencies }, null, 2),
  );
  await writeFile(
    path.join(consumerDir, 'package-lock.json'),
    JSON.stringify({ name: 'consumer', lockfileVersion: 3, requires: true, packages }, null, 2),
  );
}
