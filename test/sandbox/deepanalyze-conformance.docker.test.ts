import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, formatCellOutput, type SandboxSession } from '../../src/sandbox/index.ts';
import { differenceBeyondTiedModes } from '../support/tied-modes.ts';

/**
 * Conformance with a real DeepAnalyze-8B run: its 7 `<Code>` cells, replayed
 * in order in one session against a fresh copy of the run's data, must print
 * exactly what the run recorded in `<Execute>` (after trimming surrounding
 * whitespace; describe()'s `top` may be another of a column's tied most
 * frequent values: which one follows the CPU). Later cells read files that earlier cells wrote.
 */

const fixtureDir = join(import.meta.dirname, '..', 'fixtures', 'deepanalyze-student-loan');

interface RecordedCell {
  code: string;
  execute: string;
}

/** Extracts code the way DeepAnalyze's own loop does (deepanalyze.py: the <Code> body, then the ``` fence). */
function recordedCells(trajectory: string): RecordedCell[] {
  const cells: RecordedCell[] = [];
  const pattern = /<Code>(.*?)<\/Code>\s*<Execute>\n(.*?)\n<\/Execute>/gs;
  for (const match of trajectory.matchAll(pattern)) {
    const content = match[1]!.trim();
    const fenced = /```(?:python)?(.*?)```/s.exec(content);
    cells.push({ code: (fenced ? fenced[1]! : content).trim(), execute: match[2]! });
  }
  return cells;
}

const cells = recordedCells(await readFile(join(fixtureDir, 'trajectory.md'), 'utf8'));
let workspace: string;
let session: SandboxSession;

beforeAll(async () => {
  workspace = await mkdtemp(join(tmpdir(), 'datalyst-conformance-'));
  await cp(join(fixtureDir, 'data'), workspace, { recursive: true });
  session = await createSandbox({ workspaceDir: workspace });
});

afterAll(async () => {
  await session?.close();
  if (workspace) await rm(workspace, { recursive: true, force: true });
});

describe('replaying the DeepAnalyze student-loan run', () => {
  it('finds the 7 recorded cells', () => {
    expect(cells).toHaveLength(7);
  });

  // One test per cell, in order, sharing the session: the cells depend on each other's files.
  for (const [index, cell] of cells.entries()) {
    it(`cell ${index + 1} prints what the real run recorded`, async () => {
      const result = await session.execute(cell.code);
      expect(result.status).toBe('ok');
      // Exactly, but for describe()'s `top` of a tied mode, which depends on the CPU (tied-modes.ts).
      expect(
        differenceBeyondTiedModes(
          formatCellOutput(result).trim(),
          cell.execute.trim(),
          join(fixtureDir, 'data'),
        ),
      ).toBeNull();
    });
  }
});
