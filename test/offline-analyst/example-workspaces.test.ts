import { mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeExampleWorkspaces } from '../../scripts/make-example-workspaces.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const examples = path.join(repoRoot, 'workspace-examples');
let outDir: string;

beforeAll(async () => {
  outDir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-examples-'));
  await makeExampleWorkspaces(outDir, false);
});

afterAll(async () => {
  await rm(outDir, { recursive: true, force: true });
});

describe('the example workspaces', () => {
  it.each(['sales/orders.csv', 'sales/sales_plan.xlsx', 'time-series/daily_visits.csv'])(
    'the committed %s is exactly what the seeded script makes',
    async (file) => {
      const made = await readFile(path.join(outDir, file));
      const committed = await readFile(path.join(examples, file));
      expect(made.equals(committed)).toBe(true);
    },
  );

  it.each(['sales', 'time-series', 'student-loan', 'messy'])(
    '%s has data, a README with source and licence, an instruction, and stays under 1 MB',
    async (name) => {
      const dir = path.join(examples, name);
      const files = await readdir(dir);
      const readme = await readFile(path.join(dir, 'README.md'), 'utf8');
      expect(readme).toMatch(/Source:/);
      expect(readme).toMatch(/Licence: MIT/);
      expect((await readFile(path.join(dir, 'instruction.txt'), 'utf8')).trim().length).toBeGreaterThan(10);
      const data = files.filter((file) => !['README.md', 'instruction.txt'].includes(file));
      expect(data.length).toBeGreaterThan(0);
      const sizes = await Promise.all(files.map(async (file) => (await stat(path.join(dir, file))).size));
      expect(sizes.reduce((sum, size) => sum + size, 0)).toBeLessThan(1024 * 1024);
    },
  );

  it('credits DeepAnalyze and messytables with their commits', async () => {
    expect(await readFile(path.join(examples, 'student-loan', 'README.md'), 'utf8')).toMatch(
      /ruc-datalab\/DeepAnalyze, commit 0b54741[\s\S]*RUC-DataLab/,
    );
    expect(await readFile(path.join(examples, 'messy', 'README.md'), 'utf8')).toMatch(
      /okfn\/messytables, commit 3366a08/,
    );
  });
});
