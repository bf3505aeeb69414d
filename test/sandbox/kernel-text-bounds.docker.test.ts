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

  it('the profile sends the first 5 rows as clipped text, a missing cell as null, and stays small for 100 wide columns', async () => {
    await session.execute(
      [
        'import pandas as pd',
        "pd.DataFrame({'n': [1, 2.5, None, 4, 5, 6, 7], 'when': pd.to_datetime(['2024-01-02'] * 7),",
        "              't': ['x' * 5000, '<script>alert(1)</script>', 'a,b', None, 'e', 'f', 'g']}).to_csv('rows.csv', index=False)",
        "pd.DataFrame([['\u00e9' * 300] * 150] * 10, columns=['c%d' % i for i in range(150)]).to_csv('wide-rows.csv', index=False)",
      ].join('\n'),
    );
    const profile = await session.profileWorkspace();
    const table = profile.files.find((candidate) => candidate.path === 'rows.csv')?.tables[0];
    expect(table?.sampleRows).toHaveLength(5);
    const rows = table?.sampleRows ?? [];
    expect(rows[0]).toEqual(['1', '2024-01-02', `${'x'.repeat(39)}…`]);
    expect(rows[1]).toEqual(['2.5', '2024-01-02', '<script>alert(1)</script>']);
    expect(rows[2]?.[0]).toBeNull();
    expect(rows[3]?.[2]).toBeNull();
    // 100 profiled columns of 300-character cells (2 bytes each in UTF-8): every cell clipped, the rows within 16 KiB.
    const wide = profile.files.find((candidate) => candidate.path === 'wide-rows.csv')?.tables[0];
    expect(wide?.columnsTruncated).toBe(true);
    const wideRows = wide?.sampleRows ?? [];
    expect(wideRows.length).toBeGreaterThanOrEqual(1);
    expect(wideRows.every((row) => row.length === 100 && row.every((cell) => cell?.length === 40))).toBe(
      true,
    );
    expect(Buffer.byteLength(wideRows.flat().join(''))).toBeLessThanOrEqual(16 * 1024);
    expect(wideRows.length).toBeLessThan(5);
  });
});
