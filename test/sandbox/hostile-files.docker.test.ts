import { describe, expect, it } from 'vitest';
import { SandboxFailureError } from '../../src/errors/index.ts';
import { createSandbox } from '../../src/sandbox/index.ts';
import { tmpfsInodes } from '../../src/sandbox/container-config.ts';

/**
 * Regressions of issue 10, section 2: an artifact named `a\nb.csv` reached the
 * host's run folder as it was; two million empty files wedged a session
 * (the tmpfs had no inode cap, the inodes filled the container's memory, the
 * worker was reported "restarted" and never came back).
 */
describe('files that fill the sandbox', () => {
  it('millions of empty files: the inode cap ends the cell with ENOSPC and the session keeps working', async () => {
    // 16 MiB tmpfs: 4 096 inodes, reached in well under a second.
    await using session = await createSandbox({ limits: { workdirMb: 16, scratchMb: 16 } });
    const cap = tmpfsInodes(16);
    const result = await session.execute(
      [
        'import os',
        'def fill(folder):',
        '    os.makedirs(folder, exist_ok=True)',
        '    for count in range(200_000):',
        '        try:',
        "            open(os.path.join(folder, 'f%d' % count), 'w').close()",
        '        except OSError as error:',
        '            return count, error.strerror',
        "    return count, 'no limit'",
        "print(fill('many'), fill('/tmp/many'))",
        "raise OSError(28, 'the cell stops here, as a cell that does not catch ENOSPC would')",
      ].join('\n'),
    );
    expect(result.status).toBe('error');
    const [work, scratch] = [...result.stdout.text.matchAll(/\((\d+), '([^']+)'\)/g)].map((match) => ({
      count: Number(match[1]),
      why: match[2],
    }));
    for (const filled of [work, scratch]) {
      expect(filled?.why).toBe('No space left on device');
      expect(filled?.count).toBeLessThanOrEqual(cap);
      expect(filled?.count).toBeGreaterThan(cap - 100);
    }
    expect(
      await session.execute("import shutil\nshutil.rmtree('many')\nshutil.rmtree('/tmp/many')\n1 + 1"),
    ).toMatchObject({
      status: 'ok',
      value: '2',
    });
  });

  it('a worker that cannot be restarted is reported as such, never as "restarted"; close() does not throw', async () => {
    // /tmp is larger than the memory: a process that fills it leaves no room for a new worker.
    const session = await createSandbox({ limits: { memoryMb: 256, scratchMb: 512, cellTimeoutMs: 60_000 } });
    try {
      const result = await session.execute(
        "import os\nos.execv('/bin/sh', ['sh', '-c', 'exec head -c 600M /dev/zero > /tmp/fill'])",
        { timeoutMs: 60_000 },
      );
      expect(result.status, result.statusDetail ?? '').toBe('memory');
      expect(result.stateLost).toBe(true);
      expect(result.statusDetail).toContain('could not be restarted');
      expect(result.statusDetail).not.toContain('was restarted');
      const next = await session.execute('1 + 1').catch((error: unknown) => error);
      expect(next).toBeInstanceOf(SandboxFailureError);
      expect((next as Error).message).toContain('cannot start');
    } finally {
      await expect(session.close()).resolves.toBeUndefined();
    }
  });

  it('an artifact named a\\nb.csv is listed by the cell but never read out to the host', async () => {
    await using session = await createSandbox();
    const result = await session.execute("open('a\\nb.csv', 'w').write('x')\nopen('ok.csv', 'w').write('y')");
    expect(result.files.map((file) => file.path).sort()).toEqual(['a\nb.csv', 'ok.csv']);
    const read = await session.readFiles(['a\nb.csv', 'ok.csv']);
    expect(read.map((file) => file.path)).toEqual(['ok.csv']);
  });
});
