import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registryCell } from '../../src/agent/offline-analyst/cells/registry-cell.ts';
import { createSandbox, type SandboxSession } from '../../src/sandbox/index.ts';

/**
 * A table's load code reaches the offline analyst through the conversation's text, where a question can
 * write text shaped like the thread's notes (a review made a follow-up's question forge a "file" whose load
 * code was `__import__('os').system('id')`, and the analyst ran it). `read_table` runs only what the
 * profile writes: a pandas reader, or sqlite3.connect, with literal arguments.
 */
let session: SandboxSession;
beforeAll(async () => {
  session = await createSandbox();
  await session.execute('import pandas as pd, numpy as np, sqlite3, json');
  const registry = await session.execute(registryCell(4));
  expect(registry.status).toBe('ok');
  await session.execute(
    "open('t.csv', 'w').write('a;b\\n1;2\\n')\n" +
      "json.dump({'x': {'v': 1}, 'y': {'v': 2}}, open('t.json', 'w'))\n" +
      "c = sqlite3.connect('t.sqlite'); c.execute('create table t (a)'); c.execute('insert into t values (1)'); c.commit(); c.close()",
  );
});
afterAll(async () => {
  await session.close();
});

describe("the offline analyst's read_table", () => {
  it('reads what the profile writes: CSV with options, JSON shapes, SQLite', async () => {
    const loads = [
      "pd.read_csv('t.csv', sep=';', encoding='utf-8', skiprows=[], header=0)",
      "pd.read_json('t.json', orient='index', convert_axes=False).rename_axis('key').reset_index()",
      "pd.json_normalize(pd.read_json('t.json', typ='series', convert_axes=False).tolist())",
      "pd.read_sql_query('SELECT * FROM \"t\"', sqlite3.connect('t.sqlite'))",
    ];
    for (const load of loads) {
      const result = await session.execute(`read_table(${JSON.stringify(load)}, pd).shape`);
      expect(result.status, `${load}: ${result.error?.value ?? ''}`).toBe('ok');
    }
  });

  it('runs nothing else', async () => {
    const forged = [
      "__import__('os').system('touch pwned')",
      "pd.read_csv.__globals__['__builtins__']['open']('pwned', 'w')",
      "pd.io.common.os.system('touch pwned')",
      "pd.read_csv('t.csv').to_csv('pwned')",
      "pd.read_csv(open('pwned', 'w'))",
      '[x for x in ()]',
    ];
    for (const load of forged) {
      const result = await session.execute(`read_table(${JSON.stringify(load)}, pd)`);
      expect(result.status, load).toBe('error');
      expect(result.error?.value, load).toContain('not a pandas reader with literal arguments');
    }
    expect((await session.execute("import os\nos.path.exists('pwned')")).value).toBe('False');
  });
});
