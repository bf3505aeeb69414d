import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type OutputChunk, type SandboxSession } from '../../src/sandbox/index.ts';

/**
 * `ExecuteOptions.onOutput`: what a running cell prints reaches the host while
 * it runs (coalesced, bounded), in order, before the result, and the full
 * capped output still comes in the result. The backend is `createSandbox`'s
 * default (test/sandbox-local runs this file again with the local backend).
 */
describe('live cell output', () => {
  const maxOutputBytes = 64 * 1024;
  let session: SandboxSession;
  beforeAll(async () => {
    session = await createSandbox({ limits: { cellTimeoutMs: 30_000, maxOutputBytes } });
  });
  afterAll(async () => {
    await session?.close();
  });

  it('a cell that prints every 100 ms for 2 s yields at least 5 chunks before its result, in order', async () => {
    const chunks: OutputChunk[] = [];
    let settled = false;
    let beforeResult = 0;
    const running = session.execute(
      "import sys, time\nfor i in range(20):\n    print('line', i)\n    if i % 5 == 0:\n        print('warn', i, file=sys.stderr)\n    time.sleep(0.1)\n'done'",
      {
        onOutput: (chunk) => {
          chunks.push(chunk);
          if (!settled) beforeResult += 1;
        },
      },
    );
    const result = await running.finally(() => (settled = true));
    expect(result.status).toBe('ok');
    expect(result.value).toBe("'done'");
    expect(beforeResult).toBe(chunks.length);
    expect(chunks.length).toBeGreaterThanOrEqual(5);
    const joined = (stream: OutputChunk['stream']) =>
      chunks
        .filter((chunk) => chunk.stream === stream)
        .map((chunk) => chunk.text)
        .join('');
    expect(joined('stdout')).toBe(result.stdout.text);
    expect(joined('stderr')).toBe(result.stderr.text);
    expect(result.stdout.text).toBe(Array.from({ length: 20 }, (_, i) => `line ${i}\n`).join(''));
  });

  it('bounds a flood: live chunks never exceed maxOutputBytes in total, nor 64 KiB each; the result is output-limit', async () => {
    const chunks: OutputChunk[] = [];
    const result = await session.execute(
      "import sys\nfor i in range(200_000):\n    print('x' * 100)\n    print('y' * 100, file=sys.stderr)",
      { onOutput: (chunk) => chunks.push(chunk) },
    );
    expect(result.status).toBe('output-limit');
    const total = chunks.reduce((sum, chunk) => sum + chunk.text.length, 0);
    expect(total).toBeGreaterThan(0);
    expect(total).toBeLessThanOrEqual(maxOutputBytes);
    expect(Math.max(...chunks.map((chunk) => chunk.text.length))).toBeLessThanOrEqual(64 * 1024);
    // Live output is a prefix of what the result keeps.
    const stdout = chunks
      .filter((chunk) => chunk.stream === 'stdout')
      .map((chunk) => chunk.text)
      .join('');
    expect(result.stdout.text.startsWith(stdout)).toBe(true);
    expect(await session.execute('1 + 1')).toMatchObject({ status: 'ok', value: '2' });
  });

  it('sends no output frames when nobody listens, and keeps multi-byte characters whole across chunks', async () => {
    const quiet = await session.execute("print('quiet')");
    expect(quiet.stdout.text).toBe('quiet\n');
    const chunks: OutputChunk[] = [];
    const result = await session.execute(
      "import sys, time\nfor i in range(5):\n    sys.stdout.buffer.write('é€😀'.encode()[:3 + i])\n    sys.stdout.flush()\n    time.sleep(0.12)\nprint()",
      { onOutput: (chunk) => chunks.push(chunk) },
    );
    expect(chunks.map((chunk) => chunk.text).join('')).toBe(result.stdout.text);
  });
});
