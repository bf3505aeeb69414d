import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as datalyst from '../../src/index.ts';
import { parseConfigFile } from '../../src/config/index.ts';
import { runDatalyst } from '../cli/support/cli-harness.ts';
import { shippedSchemaValidator } from '../support/json-schema-validator.ts';

/**
 * The README's snippets are what runs: each TypeScript block is a file in
 * examples/ (which test/package compiles against the packed package and
 * runs), the config block is a valid config, the help block is the real help,
 * and the list of exports is the public index.
 */

const projectRoot = path.resolve(import.meta.dirname, '../..');
const readme = await readFile(path.join(projectRoot, 'README.md'), 'utf8');

/** The fenced blocks of one language ('' for none), read fence by fence. */
function blocks(language: string): string[] {
  const found: string[] = [];
  let open: { language: string; lines: string[] } | null = null;
  for (const line of readme.split('\n')) {
    if (open === null) {
      const fence = /^```(\S*)$/.exec(line);
      if (fence) open = { language: fence[1] ?? '', lines: [] };
    } else if (line === '```') {
      if (open.language === language) found.push(`${open.lines.join('\n')}\n`);
      open = null;
    } else {
      open.lines.push(line);
    }
  }
  return found;
}

describe('README', () => {
  it('shows only examples/ files as TypeScript, with the import a user writes', async () => {
    const examples = new Map<string, string>();
    for (const name of await readdir(path.join(projectRoot, 'examples'))) {
      const source = await readFile(path.join(projectRoot, 'examples', name), 'utf8');
      examples.set(source.replaceAll("'../src/index.ts'", "'datalyst'"), name);
    }
    const typescript = blocks('ts');
    expect(typescript.length).toBeGreaterThanOrEqual(3);
    for (const block of typescript) expect(examples.get(block), block.slice(0, 200)).toBeDefined();
  });

  it('the sandbox example reads a file that exists in the workspace it runs on', async () => {
    const sandbox = await readFile(path.join(projectRoot, 'examples', 'sandbox.ts'), 'utf8');
    const file = /read_csv\('([^']+)'\)/.exec(sandbox)?.[1] ?? '';
    const workspace = /\?\? '([^']+)'/.exec(sandbox)?.[1] ?? '';
    expect(await readdir(path.join(projectRoot, workspace))).toContain(file);
  });

  it('shows a config file that Datalyst and its shipped JSON Schema accept', () => {
    const json = blocks('json');
    expect(json.length).toBeGreaterThanOrEqual(1);
    const validate = shippedSchemaValidator('config.schema.json');
    for (const block of json) {
      expect(() => parseConfigFile(block, 'README.md')).not.toThrow();
      expect(validate(JSON.parse(block))).toEqual([]);
    }
  });

  it('shows analyze --help as it is: every option it lists exists, with the same text', async () => {
    const help = (await runDatalyst(['analyze', '--help'])).stdout;
    const block = blocks('').find((text) => text.startsWith('$ datalyst analyze --help')) ?? '';
    const shown = block.split('\n').slice(1).join('\n').trim();
    expect(shown.length).toBeGreaterThan(0);
    // Other commands' engineers add options: the README may lag behind, never disagree.
    for (const line of shown.split('\n').filter((text) => /^ {2}-/.test(text))) {
      expect(help, line).toContain(line);
    }
  });

  it('lists every public export, and nothing else, in "The library"', async () => {
    const section = readme.slice(
      readme.indexOf('What the package exports'),
      readme.indexOf('## Example workspaces'),
    );
    const listed = new Set([...section.matchAll(/`([A-Za-z_]+)`/g)].map((match) => match[1] ?? ''));
    listed.delete('src'); // `src/index.ts`
    const index = await readFile(path.join(projectRoot, 'src', 'index.ts'), 'utf8');
    const exported = new Set(
      [...index.matchAll(/export (?:type )?\{([^}]*)\}/g)].flatMap((match) =>
        (match[1] ?? '')
          .split(',')
          .map((name) => name.trim())
          .filter((name) => name !== ''),
      ),
    );
    expect([...listed].sort()).toEqual([...exported].sort());
    for (const name of Object.keys(datalyst)) expect(exported, name).toContain(name);
  });
});
