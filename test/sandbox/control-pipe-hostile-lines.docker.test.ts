import { afterEach, describe, expect, it } from 'vitest';
import { createSandbox, type SandboxSession } from '../../src/sandbox/index.ts';

/**
 * Regressions of two holes found in review (issue 10, section 1): the worker's
 * control pipe to the supervisor is open in the cell's own process, and what
 * a cell wrote there could take the supervisor (PID 1, the only holder of the
 * host channel) down.
 * - `os.write(control_out, b'[]\n')`: a JSON line that is not an object raised
 *   AttributeError in the supervisor's loop; PID 1 exited and the session
 *   ended ("The kernel closed its output").
 * - 16 MiB of newlines: the supervisor logged every empty line and cut its
 *   buffer one line at a time (quadratic), so it stopped enforcing the cell's
 *   timeout and the host's answer timer ended the session ("did not answer").
 * Both must leave the supervisor answering: the cell's own result, then the next cell.
 */

const controlOut = [
  'import os',
  "argv = open('/proc/self/cmdline').read().split('\\0')",
  "control_out = int(argv[argv.index('--control-out') + 1])",
].join('\n');

describe("hostile lines on the worker's control pipe (real Docker)", () => {
  let session: SandboxSession | undefined;
  afterEach(async () => {
    await session?.close();
    session = undefined;
  });

  it('control pipe `[]` line killed the supervisor: now ignored, and the session goes on', async () => {
    session = await createSandbox({ limits: { cellTimeoutMs: 10_000 } });
    const result = await session.execute(
      [
        controlOut,
        "for line in (b'[]\\n', b'42\\n', b'\"done\"\\n', b'null\\n', b'{\"type\": []}\\n', b'{\"type\": \"done\", \"id\": {}}\\n'):",
        '    os.write(control_out, line)',
        "print('still here')",
      ].join('\n'),
    );
    expect(result).toMatchObject({ status: 'ok', stdout: { text: 'still here\n' }, stateLost: false });
    expect(await session.execute('1 + 1')).toMatchObject({ status: 'ok', value: '2' });
  });

  it('control pipe newline flood wedged the supervisor past the answer timer: now the cell answers and the next one runs', async () => {
    session = await createSandbox({ limits: { cellTimeoutMs: 10_000, interruptGraceMs: 1_000 } });
    const result = await session.execute(
      [
        controlOut,
        'import threading',
        'def flood():',
        "    chunk = b'\\n' * 65536",
        '    for _ in range(256):  # 16 MiB',
        '        os.write(control_out, chunk)',
        'thread = threading.Thread(target=flood)',
        'thread.start()',
        'thread.join()',
        "print('flooded')",
      ].join('\n'),
    );
    expect(result).toMatchObject({ status: 'ok', stdout: { text: 'flooded\n' } });
    expect(await session.execute('1 + 1')).toMatchObject({ status: 'ok', value: '2' });
  });
});
