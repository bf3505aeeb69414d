import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, formatCellOutput, type SandboxSession } from '../../src/sandbox/index.ts';

/**
 * Regressions from review: texts a cell controls (an exception's message, a
 * column label, a CSV header) reached the host whole, and one reached the
 * model. The kernel now clips them; the host's schemas bound them again.
 */

const KERNEL_ERROR_CHARS = 64 * 1024;
let session: SandboxSession;

beforeAll(async () => {
  session = await createSandbox();
});

afterAll(async () => {
  await session?.close();
});

describe('texts a cell controls are bounded', () => {
  it('a 30-million-character exception is an `error` (not output-limit) with its value and traceback clipped', async () => {
    const result = await session.execute("kept = 1\nraise ValueError('v' * 30_000_000)");
    expect(result.status).toBe('error');
    expect(result.statusDetail).toBeNull();
    expect(result.error?.name).toBe('ValueError');
    const value = result.error?.value ?? '';
    expect(value.startsWith('v'.repeat(1000))).toBe(true);
    expect(value.length).toBeLessThan(KERNEL_ERROR_CHARS + 100);
    expect(value).toContain(`(${30_000_000 - KERNEL_ERROR_CHARS} more characters)`);
    const traceback = result.error?.traceback ?? '';
    expect(traceback.length).toBeLessThan(KERNEL_ERROR_CHARS + 100);
    expect(traceback).toMatch(/^Traceback/);
    expect(traceback).toContain("raise ValueError('v' * 30_000_000)");
    expect(traceback).toContain('characters left out');
    // The traceback is also on stderr, clipped the same way, and shown once.
    expect(result.stderr.truncated).toBe(false);
    expect(result.stderr.text.endsWith(traceback)).toBe(true);
    expect(formatCellOutput(result).length).toBeLessThan(KERNEL_ERROR_CHARS + 200);
    expect((await session.execute('kept')).value).toBe('1');
  });

  it('a 5-million-character column label arrives cut in a displayed table', async () => {
    const result = await session.execute(
      "import pandas as pd\nlong = 'c' * 5_000_000\nframe = pd.DataFrame({long: [1, 2]}, index=[long, 'b'])\nframe",
    );
    expect(result.status).toBe('ok');
    const [table] = result.tables;
    expect(table?.columns[0]?.length).toBeLessThanOrEqual(200);
    expect(table?.columns[0]?.endsWith('…')).toBe(true);
    expect(table?.index[0]?.length).toBeLessThanOrEqual(200);
    expect(table?.rows).toEqual([[1], [2]]);
    expect(result.value?.length).toBeLessThan(64 * 1024 + 100);
  });

  it('a 5-million-character CSV header arrives cut in the workspace profile', async () => {
    await session.execute(
      "with open('wide.csv', 'w') as handle:\n    handle.write('h' * 5_000_000 + ',b\\n1,2\\n3,4\\n')",
    );
    const profile = await session.profileWorkspace();
    const file = profile.files.find((candidate) => candidate.path === 'wide.csv');
    expect(file?.error).toBeNull();
    const columns = file?.tables[0]?.columns ?? [];
    expect(columns.map((column) => column.name.length)).toEqual([1000, 1]);
    expect(columns[0]?.name.endsWith('…')).toBe(true);
  });
});
