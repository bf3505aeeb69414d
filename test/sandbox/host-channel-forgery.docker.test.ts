import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type CellResult, type SandboxSession } from '../../src/sandbox/index.ts';

/**
 * Regressions of the forged-result hole (issue 10, section 1): docker-init ran
 * as the cell's uid and was dumpable, so a cell could open /proc/1/fd/1 and
 * write a well-formed `result` line that the host took for the kernel's
 * answer (a ValueError came back `ok`; a background thread replaced the next
 * cell's `total revenue 30` with 987654.3). Now the supervisor is PID 1 and not
 * dumpable, and every frame carries a MAC under a key only it holds; these
 * cells try every path and must leave each real result intact.
 */

const FORGED = '987654.3';

/** Python: `forged_lines()` — well-formed answers of every kind for every id a cell might guess. */
const forgeryPrelude = String.raw`
import json, os, threading, time
FORGED = '${FORGED}'
def forged_result():
    text = {'text': FORGED + '\n', 'truncated': False, 'totalBytes': len(FORGED) + 1}
    return {'status': 'ok', 'stdout': text, 'stderr': {'text': '', 'truncated': False, 'totalBytes': 0},
            'error': None, 'value': FORGED, 'figures': [], 'charts': [], 'tables': [], 'files': [],
            'durationMs': 1, 'stateLost': False, 'statusDetail': None}
def forged_lines():
    lines = []
    for guess in list(range(0, 40)) + [str(n) for n in range(0, 40)]:
        lines.append({'type': 'result', 'id': guess, 'result': forged_result()})
        lines.append({'type': 'files', 'id': guess, 'files': [{'path': 'real.txt', 'dataBase64': 'Rk9SR0VE'}], 'skipped': []})
        lines.append({'type': 'profile', 'id': guess, 'profile': {'files': [], 'truncated': False}})
        lines.append({'type': 'done', 'id': guess, 'token': 'guess', 'result': forged_result(), 'profile': {'files': [], 'truncated': False}})
    return ''.join(json.dumps(line) + '\n' for line in lines)
def control_pipes():
    """The worker's own pipes other than its stdout/stderr: the control channel to the supervisor."""
    own = {os.fstat(1).st_ino, os.fstat(2).st_ino}
    found = []
    for name in os.listdir('/proc/self/fd'):
        fd = int(name)
        try:
            link = os.readlink('/proc/self/fd/%d' % fd)
            if fd > 2 and link.startswith('pipe:') and os.fstat(fd).st_ino not in own:
                found.append(fd)
        except OSError:
            pass
    return found
def try_write(path, data):
    try:
        with open(path, 'w') as handle:
            handle.write(data)
        return 'WROTE'
    except OSError as error:
        return type(error).__name__
`;

function expectNothingForged(result: CellResult): void {
  expect(JSON.stringify(result)).not.toContain(FORGED);
}

describe('the host channel cannot be forged from a cell (real Docker)', () => {
  let session: SandboxSession;
  let workspaceDir: string;
  beforeAll(async () => {
    workspaceDir = await mkdtemp(join(tmpdir(), 'datalyst-forgery-'));
    await writeFile(join(workspaceDir, 'sales.csv'), 'region,revenue\nnorth,10\nsouth,20\n');
    session = await createSandbox({ workspaceDir, limits: { cellTimeoutMs: 30_000 } });
    const setup = await session.execute(forgeryPrelude);
    expect(setup.status).toBe('ok');
  });
  afterAll(async () => {
    await session?.close();
    await rm(workspaceDir, { recursive: true, force: true });
  });

  for (const fd of [1, 2]) {
    it(`forged result line via /proc/1/fd/${fd}: refused, and the cell that raised stays an error`, async () => {
      const result = await session.execute(
        [
          `paths = ['/proc/1/fd/${fd}', '/proc/1/task/1/fd/${fd}', '/proc/%d/fd/${fd}' % os.getppid()]`,
          'print({path: try_write(path, forged_lines()) for path in paths})',
          "raise ValueError('the real outcome')",
        ].join('\n'),
      );
      expect(result.status).toBe('error');
      expect(result.error).toMatchObject({ name: 'ValueError', value: 'the real outcome' });
      expect(result.stdout.text).toContain('PermissionError');
      expect(result.stdout.text).not.toContain('WROTE');
      expectNothingForged(result);
      expect(await session.execute('1 + 1')).toMatchObject({ status: 'ok', value: '2' });
    });
  }

  it("refuses the supervisor's memory, environment and every other process's descriptors; signals to it change nothing", async () => {
    const result = await session.execute(
      [
        'import signal',
        "print('pid1', open('/proc/1/comm').read().strip(), 'parent', os.getppid())",
        "for name, mode in (('mem', 'rb'), ('environ', 'rb'), ('fd/0', 'rb'), ('cmdline', 'rb')):",
        '    try:',
        "        open('/proc/1/' + name, mode).read(1)",
        "        print(name, 'READ')",
        '    except OSError as error:',
        '        print(name, type(error).__name__)',
        'me = str(os.getpid())',
        'opened = []',
        "for pid in [p for p in os.listdir('/proc') if p.isdigit() and p != me]:",
        '    for fd in range(0, 64):',
        "        if try_write('/proc/%s/fd/%d' % (pid, fd), '') == 'WROTE':",
        '            opened.append((pid, fd))',
        "print('other descriptors opened', opened)",
        'for number in range(1, 32):',
        '    if number not in (signal.SIGKILL, signal.SIGSTOP, signal.SIGINT):',
        '        try:',
        '            os.kill(1, number)',
        '        except OSError:',
        '            pass',
        'time.sleep(0.5)',
        "'still here'",
      ].join('\n'),
    );
    expect(result.status).toBe('ok');
    expect(result.stdout.text).toContain('pid1 python3 parent 1\n');
    for (const name of ['mem', 'environ', 'fd/0'])
      expect(result.stdout.text).toContain(`${name} PermissionError`);
    expect(result.stdout.text).toContain('other descriptors opened []');
    expect(result.value).toBe("'still here'");
    expect(await session.execute('1 + 1')).toMatchObject({ status: 'ok', value: '2' });
  });

  it("background thread forging the next cell's result: the real result comes back intact", async () => {
    const started = await session.execute(
      [
        "attempts = {'host': 0, 'control': 0, 'outcomes': set()}",
        'def forge():',
        '    lines = forged_lines()',
        '    pipes = control_pipes()',
        '    deadline = time.monotonic() + 4',
        '    while time.monotonic() < deadline:',
        "        for path in ('/proc/1/fd/1', '/proc/1/fd/2'):",
        "            attempts['outcomes'].add(try_write(path, lines))",
        "            attempts['host'] += 1",
        '        for fd in pipes:',
        '            for line in lines.splitlines(True):',
        '                try:',
        '                    os.write(fd, line.encode())',
        "                    attempts['control'] += 1",
        '                except OSError:',
        '                    pass',
        '        time.sleep(0.01)',
        'threading.Thread(target=forge, daemon=True).start()',
        "print('started')",
      ].join('\n'),
    );
    expect(started).toMatchObject({ status: 'ok' });
    const next = await session.execute(
      "import pandas as pd\ntime.sleep(0.5)\ntotal = pd.read_csv('sales.csv').revenue.sum()\nprint('total revenue', total)\ntotal",
    );
    expect(next.status).toBe('ok');
    expect(next.stdout.text).toBe('total revenue 30\n');
    expect(next.value).toBe('np.int64(30)');
    expectNothingForged(next);
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    const after = await session.execute(
      "print(attempts['host'] > 10, attempts['control'] > 10, attempts['outcomes'])",
    );
    expect(after.stdout.text).toBe("True True {'PermissionError'}\n");
  });

  it('forged `files` and `profile` answers: readFiles and profileWorkspace return the real ones', async () => {
    const started = await session.execute(
      [
        "open('real.txt', 'w').write('the real content')",
        'def forge_answers():',
        '    lines = forged_lines()',
        '    deadline = time.monotonic() + 6',
        '    while time.monotonic() < deadline:',
        "        try_write('/proc/1/fd/1', lines)",
        '        time.sleep(0.002)',
        'threading.Thread(target=forge_answers, daemon=True).start()',
      ].join('\n'),
    );
    expect(started.status).toBe('ok');
    for (let round = 0; round < 5; round += 1) {
      const [file] = await session.readFiles(['real.txt']);
      expect(Buffer.from(file!.bytes).toString()).toBe('the real content');
    }
    const profile = await session.profileWorkspace();
    expect(profile.files.map((file) => file.path)).toContain('sales.csv');
    expect(JSON.stringify(profile)).not.toContain(FORGED);
  });
});
