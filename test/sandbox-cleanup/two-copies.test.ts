import { execa } from 'execa';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Regression: two copies of exit-cleanup.ts in one process took turns putting their signal listener
 * first, in microtasks, forever (a Docker test run of several files ran out of memory in vitest's
 * single fork). The copies now leave each other alone, and do not count each other as the application.
 */
const fixture = path.join(import.meta.dirname, 'fixtures', 'two-copies.ts');
const run = (args: string[]) =>
  execa(process.execPath, ['--import', 'tsx', fixture, ...args], { reject: false, timeout: 15_000 });

describe('two copies of the exit cleanup in one process', () => {
  it('settle: the timer after their installs fires; an application listener prepended later is behind one copy', async () => {
    const result = await run([]);
    expect(result.timedOut).toBe(false);
    const settled = JSON.parse(result.stdout.split('\n')[0] ?? '{}') as {
      settled?: boolean;
      order?: string[];
    };
    expect(settled.settled).toBe(true);
    expect(settled.order?.[0]).toBe('datalyst');
    expect(settled.order?.filter((who) => who === 'datalyst')).toHaveLength(2);
  });

  it("the application's once handler takes the first SIGINT; the second removes both copies' kernels and exits", async () => {
    const result = await run(['signal']);
    expect(result.timedOut).toBe(false);
    expect(result.signal).toBe('SIGINT');
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.filter((line) => line.applicationHandled === true)).toHaveLength(1);
    expect(
      lines.flatMap((line) => (typeof line.disposed === 'string' ? [line.disposed] : [])).sort(),
    ).toEqual(['first', 'second']);
  });
});
