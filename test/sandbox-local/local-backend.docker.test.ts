import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatalystError } from '../../src/errors/index.ts';
import { createSandboxWithBackend, type SandboxSession } from '../../src/sandbox/index.ts';
import { createLocalBackend, LOCAL_BACKEND_WARNING } from '../../src/sandbox/local-backend.ts';

/**
 * The local backend: no isolation (and it says so), but the limits a plain
 * process can have. The kernel's behaviour itself is covered by the Docker
 * tests run again on this backend (kernel-cells-local, workspace-local).
 * Needs a Python with pandas and matplotlib (Debian: python3-pandas,
 * python3-matplotlib, python3-openpyxl, python3-altair).
 */

const warnings: string[] = [];
const backend = createLocalBackend({ warn: (message) => warnings.push(message) });
const hostCanary = `local-canary-${Math.random().toString(36).slice(2)}`;
let session: SandboxSession;

beforeAll(async () => {
  process.env['DATALYST_LOCAL_CANARY'] = hostCanary;
  session = await createSandboxWithBackend(backend, {
    limits: {
      memoryMb: 1024,
      maxOutputBytes: 64 * 1024,
      interruptGraceMs: 1_000,
      maxFileBytes: 1 << 20,
      maxOpenFiles: 256,
    },
  });
});

afterAll(async () => {
  delete process.env['DATALYST_LOCAL_CANARY'];
  await session?.close();
});

describe('the local backend', () => {
  it('warns loudly, at every start, that nothing is isolated', () => {
    expect(session.backend).toBe('local');
    expect(warnings).toEqual([LOCAL_BACKEND_WARNING]);
    expect(LOCAL_BACKEND_WARNING).toContain('NOTHING IS ISOLATED');
  });

  it('runs in a working directory of its own, with none of the host’s environment', async () => {
    const result = await session.execute(
      "import os\nprint(os.path.basename(os.getcwd()), os.path.basename(os.path.dirname(os.getcwd())).startswith('datalyst-local-'))\nsorted(os.environ)",
    );
    expect(result.stdout.text).toBe('work True\n');
    expect(result.value).not.toContain('DATALYST_LOCAL_CANARY');
    expect(JSON.stringify(result)).not.toContain(hostCanary);
  });

  it('interrupts at the timeout and keeps the state; restarts a kernel that ignores the interrupt', async () => {
    await session.execute('kept = 41');
    const sleeping = await session.execute('import time\ntime.sleep(60)', { timeoutMs: 1_000 });
    expect(sleeping.status).toBe('timeout');
    expect(sleeping.stateLost).toBe(false);
    expect((await session.execute('kept + 1')).value).toBe('42');
    const stubborn = await session.execute(
      'import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass',
      { timeoutMs: 1_000 },
    );
    expect(stubborn.status).toBe('timeout');
    expect(stubborn.stateLost).toBe(true);
    expect((await session.execute('1 + 1')).value).toBe('2');
  });

  it('caps output, memory (address space), file size and open files', async () => {
    const flood = await session.execute("while True:\n    print('x' * 1000)");
    expect(flood.status).toBe('output-limit');
    const memory = await session.execute('block = bytearray(2 * 1024**3)');
    expect(memory.status).toBe('error');
    expect(memory.error?.name).toBe('MemoryError');
    const big = await session.execute("open('big.bin', 'wb').write(b'0' * (2 << 20))");
    expect(big.error?.value).toContain('File too large');
    const files = await session.execute(
      "handles = []\ntry:\n    while True:\n        handles.append(open('/dev/null'))\nexcept OSError as error:\n    print(len(handles) < 256, error.strerror)\nfinally:\n    for handle in handles:\n        handle.close()",
    );
    expect(files.stdout.text).toBe('True Too many open files\n');
  });

  it('kills a double-forked daemon when its cell ends', async () => {
    const result = await session.execute(
      "import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        while True:\n            open('beat.txt', 'a').write('x')\n            time.sleep(0.05)\n    os._exit(0)\nos.wait()\ntime.sleep(0.3)",
    );
    expect(result.status).toBe('ok');
    const check = await session.execute(
      "import os, time\nsize = os.path.getsize('beat.txt')\ntime.sleep(0.5)\nos.path.getsize('beat.txt') == size",
    );
    expect(check.value).toBe('True');
  });

  it('close stops the kernel and removes its folder', async () => {
    const own = await createSandboxWithBackend(backend);
    const where = await own.execute('import os\nos.getpid(), os.getppid(), os.path.dirname(os.getcwd())');
    const match = /^\((\d+), (\d+), '(.+)'\)$/.exec(where.value ?? '');
    expect(match).not.toBeNull();
    const [, workerPid, supervisorPid, sessionDir] = match ?? [];
    expect(existsSync(sessionDir ?? '')).toBe(true);
    await own.close();
    expect(existsSync(sessionDir ?? '')).toBe(false);
    for (const pid of [workerPid, supervisorPid]) expect(existsSync(`/proc/${pid}`)).toBe(false);
  });

  it('says what to install when no Python with pandas is found', async () => {
    const missing = createLocalBackend({ python: '/nonexistent/python3', warn: () => {} });
    const error = await createSandboxWithBackend(missing).catch((caught: unknown) => caught);
    expect(DatalystError.isInstance(error)).toBe(true);
    expect((error as DatalystError).code).toBe('SANDBOX_UNAVAILABLE');
    expect((error as DatalystError).fix).toContain('pandas');
  });
});
