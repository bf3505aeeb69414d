import { afterEach, describe, expect, it } from 'vitest';
import { SandboxFailureError } from '../../src/errors/index.ts';
import {
  createSandbox,
  readSandboxEnvironment,
  type CellResult,
  type SandboxSession,
} from '../../src/sandbox/index.ts';

/**
 * Regression of a hole found in review (issue 10, section 1): under gVisor
 * (runsc 2022-12, Debian's) a non-dumpable PID 1 does NOT close its
 * /proc/1/fd to a process of the same uid. A cell lists /proc/1/fd, opens
 * /proc/1/fd/1 and writes to the host channel, and opens /proc/1/fd/0 and
 * reads (steals) the host's next requests. What holds there is the defence in
 * depth: the line it writes carries no MAC, so the session ends with
 * SandboxFailureError at once; a stolen request is never answered, so the
 * host's answer timer ends the session. Neither is ever taken as an answer.
 * Under runc both opens are refused and the session goes on.
 * Runs in the docker project (runc) and in the runsc project.
 */

const runtime = readSandboxEnvironment().runtime ?? 'runc';
const FORGED = '987654.3';

const forgedResultLine = String.raw`
import json, os
FORGED = '${FORGED}'
def forged_result_lines():
    text = {'text': FORGED + '\n', 'truncated': False, 'totalBytes': len(FORGED) + 1}
    result = {'status': 'ok', 'stdout': text, 'stderr': {'text': '', 'truncated': False, 'totalBytes': 0},
              'error': None, 'value': FORGED, 'figures': [], 'charts': [], 'tables': [], 'files': [],
              'durationMs': 1, 'stateLost': False, 'statusDetail': None}
    return ''.join(json.dumps({'type': 'result', 'id': guess, 'result': result}) + '\n' for guess in range(40))
`;

async function outcomeOf(promise: Promise<CellResult>): Promise<CellResult | Error> {
  return promise.then(
    (result) => result,
    (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
  );
}

describe(`the supervisor's /proc/1/fd under ${runtime}`, () => {
  let session: SandboxSession | undefined;
  afterEach(async () => {
    await session?.close();
    session = undefined;
  });

  it('gVisor /proc/1/fd/1 opened by a cell: the unauthenticated line ends the session, never taken as the result', async () => {
    session = await createSandbox({ limits: { cellTimeoutMs: 20_000 } });
    const outcome = await outcomeOf(
      session.execute(
        [
          forgedResultLine,
          'try:',
          "    with open('/proc/1/fd/1', 'w') as handle:",
          '        handle.write(forged_result_lines())',
          "    print('WROTE')",
          'except OSError as error:',
          '    print(type(error).__name__)',
          "raise ValueError('the real outcome')",
        ].join('\n'),
      ),
    );
    if (runtime === 'runsc') {
      expect(outcome).toBeInstanceOf(SandboxFailureError);
      expect((outcome as Error).message).toContain('the supervisor did not write');
      await expect(session.execute('1 + 1')).rejects.toBeInstanceOf(SandboxFailureError);
    } else {
      expect(outcome).not.toBeInstanceOf(Error);
      const result = outcome as CellResult;
      expect(result).toMatchObject({ status: 'error', error: { name: 'ValueError' } });
      expect(result.stdout.text).toBe('PermissionError\n');
      expect(JSON.stringify(result)).not.toContain(FORGED);
      expect(await session.execute('1 + 1')).toMatchObject({ status: 'ok', value: '2' });
    }
  });

  it('gVisor /proc/1/fd/0 read by a background thread: the stolen cell fails the session, never answered by anything else', async () => {
    session = await createSandbox({ limits: { cellTimeoutMs: 2_000, interruptGraceMs: 500 } });
    const started = await session.execute(
      [
        'import os, threading',
        "stolen = {'bytes': b'', 'error': None}",
        'def steal():',
        '    try:',
        "        fd = os.open('/proc/1/fd/0', os.O_RDONLY)",
        "        stolen['bytes'] = os.read(fd, 1 << 16)",
        '    except OSError as error:',
        "        stolen['error'] = type(error).__name__",
        'threading.Thread(target=steal, daemon=True).start()',
        'import time; time.sleep(0.5)',
      ].join('\n'),
    );
    expect(started.status).toBe('ok');
    const outcome = await outcomeOf(session.execute("print('total revenue', 10 + 20)"));
    if (runtime === 'runsc') {
      // The thread and the supervisor race for the same stdin bytes. Whichever wins, nothing
      // else answers: the request stolen fails the session, or the real result comes back.
      if (outcome instanceof Error) {
        expect(outcome).toBeInstanceOf(SandboxFailureError);
        expect(outcome.message).toContain('did not answer');
      } else {
        expect(outcome).toMatchObject({ status: 'ok', stdout: { text: 'total revenue 30\n' } });
      }
    } else {
      expect(outcome).toMatchObject({ status: 'ok', stdout: { text: 'total revenue 30\n' } });
      const after = await session.execute("stolen['error'], len(stolen['bytes'])");
      expect(after.value).toBe("('PermissionError', 0)");
    }
  });
});
