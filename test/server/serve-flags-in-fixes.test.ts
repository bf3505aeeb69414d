import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { runDatalyst } from '../cli/support/cli-harness.ts';
import { askOnNewThread, startTestServer } from './support/server-harness.ts';

const serverDir = path.resolve('src/server');

/** Every `--flag` named in a string of src/server (messages and fixes; comments are not strings). */
async function flagsNamedInServerStrings(): Promise<Map<string, string[]>> {
  const named = new Map<string, string[]>();
  const files = (await readdir(serverDir, { recursive: true })).filter((file) => file.endsWith('.ts'));
  for (const file of files) {
    const source = ts.createSourceFile(
      file,
      await readFile(path.join(serverDir, file), 'utf8'),
      ts.ScriptTarget.Latest,
      true,
    );
    const visit = (node: ts.Node): void => {
      if (ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node)) {
        for (const match of node.text.matchAll(/(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*/g)) {
          named.set(match[0], [...(named.get(match[0]) ?? []), file]);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return named;
}

/** The long options `datalyst serve --help` lists. */
async function serveOptions(): Promise<Set<string>> {
  const help = await runDatalyst(['serve', '--help']);
  expect(help.exitCode).toBe(0);
  const options = help.stdout.split('Options:\n')[1]?.split('\n\n')[0] ?? '';
  return new Set([...options.matchAll(/^ {2}(?:-\w, )?(--[a-z][a-z-]*)/gm)].map((match) => match[1] ?? ''));
}

describe("the flags the server's messages name are options of datalyst serve", () => {
  // A 429 said to start the server "with more --max-queued-turns"; the option is --max-queued.
  it('every --flag in a string of src/server is in serve --help', async () => {
    const [named, options] = await Promise.all([flagsNamedInServerStrings(), serveOptions()]);
    expect(options).toContain('--max-queued');
    expect(named.size).toBeGreaterThan(3);
    const unknown = [...named].filter(([flag]) => !options.has(flag));
    expect(unknown).toEqual([]);
  });

  it('a 429 names --max-queued and --max-turns, and counts one turn as one turn', async () => {
    const server = await startTestServer({ maxConcurrentTurns: 1, maxQueuedTurns: 1 });
    try {
      await askOnNewThread(server.url, 'slow');
      await askOnNewThread(server.url, 'slow');
      const refused = await fetch(`${server.url}/v1/threads`, { method: 'POST' }).then(async (thread) =>
        fetch(`${server.url}/v1/threads/${((await thread.json()) as { id: string }).id}/turns`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ question: 'slow' }),
        }),
      );
      expect(refused.status).toBe(429);
      const { error } = (await refused.json()) as { error: { message: string; fix: string } };
      expect(error.message).toBe(
        '1 turn is running and 1 waiting, as many as this server takes; no room for another.',
      );
      expect(error.fix).toContain('--max-queued (turns that may wait, now 1;');
      expect(error.fix).toContain('--max-turns (turns run at once, now 1;');
      expect(error.fix).not.toContain('--max-queued-turns');
    } finally {
      await server.close();
    }
  });
});
