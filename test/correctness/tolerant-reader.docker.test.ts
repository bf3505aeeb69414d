import { cp, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadFallbackCell } from '../../src/agent/offline-analyst/cells/load-fallback-cell.ts';
import { prepareCell } from '../../src/agent/offline-analyst/cells/prepare-cell.ts';
import { registryCell } from '../../src/agent/offline-analyst/cells/registry-cell.ts';
import { setupCell } from '../../src/agent/offline-analyst/cells/setup-cell.ts';
import { createSandbox, type SandboxSession } from '../../src/sandbox/index.ts';

/**
 * The offline analyst's tolerant reader (for files the profile could not
 * load) once read a CSV with one malformed line as 2 of its 3 rows, silently.
 * It must keep every row and say which lines did not fit.
 */
const fixtures = path.resolve(import.meta.dirname, '../fixtures/reading');
let workspaceDir: string;
let session: SandboxSession;

beforeAll(async () => {
  workspaceDir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-tolerant-'));
  await cp(path.join(fixtures, 'ragged', 'ragged.csv'), path.join(workspaceDir, 'ragged.csv'));
  session = await createSandbox({ workspaceDir });
}, 120_000);

afterAll(async () => {
  await session.close();
  await rm(workspaceDir, { recursive: true, force: true });
});

describe('the tolerant reader', () => {
  it('keeps every row of a CSV with a malformed line, and says which line', async () => {
    for (const code of [setupCell(), prepareCell(200_000), registryCell(4)]) {
      expect((await session.execute(code)).status).toBe('ok');
    }
    const result = await session.execute(loadFallbackCell([{ file: 'ragged.csv', table: null }]));
    expect(result.status).toBe('ok');
    expect(result.stdout.text).toContain(
      'The tolerant reader loaded `ragged.csv`: 3 rows × 3 columns (`name`, `score`, `city`).',
    );
    expect(result.stdout.text).toContain(
      '`ragged.csv`: 1 line held more fields than the header; the rows are kept without the extra fields (`Bo,4,Lima,extra`).',
    );
  }, 120_000);
});
