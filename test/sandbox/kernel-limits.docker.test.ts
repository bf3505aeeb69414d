import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  containerLabels,
  createSandbox,
  formatCellOutput,
  type SandboxSession,
} from '../../src/sandbox/index.ts';

/**
 * Limits that cannot be talked around: timeouts (interrupt first, restart when
 * that fails), out-of-memory kills, output floods, orphaned processes, and the
 * container hardening as a cell sees it.
 */

const docker = new Docker();
const memoryMb = 512;
const maxOutputBytes = 64 * 1024;
let session: SandboxSession;

beforeAll(async () => {
  session = await createSandbox({
    limits: { memoryMb, maxOutputBytes, interruptGraceMs: 2_000, pidsLimit: 128 },
  });
});

afterAll(async () => {
  await session?.close();
});

describe('timeouts', () => {
  it('interrupts a sleeping cell and keeps the state', async () => {
    await session.execute('kept = "still here"');
    const result = await session.execute('import time\nprint("sleeping")\ntime.sleep(999)', {
      timeoutMs: 2_000,
    });
    expect(result.status).toBe('timeout');
    expect(result.stateLost).toBe(false);
    expect(result.stdout.text).toBe('sleeping\n');
    expect(result.error?.name).toBe('KeyboardInterrupt');
    expect(result.error?.traceback).toContain('time.sleep(999)');
    expect(result.error?.traceback).not.toContain('worker.py');
    expect(result.statusDetail).toContain('variables are kept');
    expect(formatCellOutput(result)).toContain('[Timeout]:');
    expect((await session.execute('kept')).value).toBe("'still here'");
  });

  it('interrupts a long pandas loop and keeps the state', async () => {
    const result = await session.execute(
      'import pandas as pd\nframe = pd.DataFrame({"a": range(1000)})\nwhile True:\n    frame["a"].apply(lambda v: v * 2).sum()',
      { timeoutMs: 1_500 },
    );
    expect(result.status).toBe('timeout');
    expect(result.stateLost).toBe(false);
    expect((await session.execute('len(frame)')).value).toBe('1000');
  });

  it('restarts the kernel when the cell ignores the interrupt, and says the state is lost', async () => {
    const result = await session.execute(
      'import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass',
      { timeoutMs: 1_000 },
    );
    expect(result.status).toBe('timeout');
    expect(result.stateLost).toBe(true);
    expect(result.statusDetail).toContain('restarted');
    const after = await session.execute('1 + 1');
    expect(after.status).toBe('ok');
    expect(after.value).toBe('2');
    expect(after.stateLost).toBe(false);
    const gone = await session.execute('kept');
    expect(gone.status).toBe('error');
    expect(gone.error?.name).toBe('NameError');
  });
});

describe('memory', () => {
  it('reports an out-of-memory kill as `memory` and keeps the session usable', async () => {
    await session.execute('before_bomb = 1');
    const result = await session.execute(
      'chunks = []\nwhile True:\n    chunks.append(b"x" * (64 * 1024 * 1024))',
    );
    expect(result.status).toBe('memory');
    expect(result.stateLost).toBe(true);
    expect(result.statusDetail).toContain('out of memory');
    const after = await session.execute('1 + 1');
    expect(after.status).toBe('ok');
    expect(after.value).toBe('2');
  });
});

describe('output', () => {
  it('stops a stdout flood with `output-limit` and keeps a truncated stdout', async () => {
    const result = await session.execute('while True:\n    print("flood " * 100)');
    expect(result.status).toBe('output-limit');
    expect(result.stdout.truncated).toBe(true);
    expect(Buffer.byteLength(result.stdout.text)).toBeLessThanOrEqual(maxOutputBytes);
    expect(result.stdout.text.length).toBeGreaterThan(maxOutputBytes / 2);
    expect(result.stdout.totalBytes).toBeGreaterThan(maxOutputBytes);
    expect(formatCellOutput(result)).toContain('[stdout truncated');
    expect((await session.execute('"alive"')).value).toBe("'alive'");
  });

  it('keeps output written by a child process', async () => {
    const result = await session.execute('import subprocess\nsubprocess.run(["echo", "from a child"])\nNone');
    expect(result.stdout.text).toBe('from a child\n');
  });
});

describe('processes', () => {
  it('kills a double-forked daemon when its cell ends', async () => {
    const started = await session.execute(
      [
        'import os, time',
        'if os.fork() == 0:',
        '    os.setsid()',
        '    if os.fork() == 0:',
        '        with open("/tmp/daemon.pid", "w") as f:',
        '            f.write(str(os.getpid()))',
        '        time.sleep(600)',
        '    os._exit(0)',
        'time.sleep(0.5)',
        'daemon_pid = int(open("/tmp/daemon.pid").read())',
        'os.waitpid(-1, os.WNOHANG)',
        'daemon_pid > 0',
      ].join('\n'),
    );
    expect(started.value).toBe('True');
    const check = await session.execute(
      'import os\ntry:\n    os.kill(daemon_pid, 0)\n    print("alive")\nexcept ProcessLookupError:\n    print("gone")',
    );
    expect(check.stdout.text).toBe('gone\n');
  });
});

describe('hardening, as a cell sees it', () => {
  it('runs as a non-root user with no capabilities and no new privileges', async () => {
    const result = await session.execute(
      'import os\nstatus = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())\nprint(os.getuid(), os.getgid(), status["CapEff"].strip(), status["CapPrm"].strip(), status["NoNewPrivs"].strip())',
    );
    expect(result.stdout.text).toBe('1000 1000 0000000000000000 0000000000000000 1\n');
  });

  it('has no network but loopback', async () => {
    const result = await session.execute(
      [
        'import socket, os',
        'print(sorted(os.listdir("/sys/class/net")))',
        'try:',
        '    socket.create_connection(("1.1.1.1", 80), timeout=2)',
        '    print("connected")',
        'except OSError as error:',
        '    print("refused", type(error).__name__)',
      ].join('\n'),
    );
    expect(result.stdout.text).toMatch(/^\['lo'\]\nrefused /);
  });

  it('has a read-only root and sized, writable tmpfs for the working directory and /tmp', async () => {
    const result = await session.execute(
      [
        'import os',
        'for path in ["/etc/evil", "/opt/datalyst/evil.py", "/home/analyst/evil"]:',
        '    try:',
        '        open(path, "w")',
        '        print("wrote", path)',
        '    except OSError as error:',
        '        print("refused", path, error.errno)',
        'mounts = {line.split()[1]: line.split()[3] for line in open("/proc/mounts")}',
        'print(mounts["/"].split(",")[0])',
        'print("noexec" in mounts["/tmp"], "nosuid" in mounts["/tmp"], "nodev" in mounts["/tmp"])',
        'stats = os.statvfs(".")',
        'print(os.getcwd(), stats.f_blocks * stats.f_frsize // (1024 * 1024))',
      ].join('\n'),
    );
    expect(result.stdout.text).toBe(
      [
        'refused /etc/evil 30',
        'refused /opt/datalyst/evil.py 30',
        'refused /home/analyst/evil 30',
        'ro',
        'True True True',
        '/home/analyst/work 1024',
        '',
      ].join('\n'),
    );
  });

  it('has the memory, pids, file-size, open-file and core limits', async () => {
    const result = await session.execute(
      [
        'import resource',
        'def read(path):',
        '    try:',
        '        return open(path).read().strip()',
        '    except OSError:',
        '        return None',
        'memory = read("/sys/fs/cgroup/memory/memory.limit_in_bytes") or read("/sys/fs/cgroup/memory.max")',
        'swap = read("/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes") or read("/sys/fs/cgroup/memory.swap.max")',
        'pids = read("/sys/fs/cgroup/pids/pids.max") or read("/sys/fs/cgroup/pids.max")',
        'print(memory, swap, pids)',
        'print(resource.getrlimit(resource.RLIMIT_NOFILE), resource.getrlimit(resource.RLIMIT_FSIZE), resource.getrlimit(resource.RLIMIT_CORE))',
      ].join('\n'),
    );
    const bytes = String(memoryMb * 1024 * 1024);
    const [cgroups, rlimits] = result.stdout.text.trim().split('\n');
    // cgroup v1 reports memory+swap (equal to memory: no swap); v2 reports the swap on its own (0).
    expect([`${bytes} ${bytes} 128`, `${bytes} 0 128`]).toContain(cgroups);
    expect(rlimits).toBe('(1024, 1024) (536870912, 536870912) (0, 0)');
  });

  it('has the CPU quota, the nproc backstop and the supervisor as pid 1', async () => {
    const result = await session.execute(
      [
        'import resource',
        'def read(path):',
        '    try:',
        '        return open(path).read().strip()',
        '    except OSError:',
        '        return None',
        'v1 = [read("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"), read("/sys/fs/cgroup/cpu/cpu.cfs_period_us")]',
        'print(" ".join(v1) if None not in v1 else read("/sys/fs/cgroup/cpu.max"))',
        'print(resource.getrlimit(resource.RLIMIT_NPROC))',
        'print(read("/proc/1/comm"))',
      ].join('\n'),
    );
    // cgroup v1: quota and period in two files; v2: both in cpu.max. 1.5 CPUs either way.
    expect(result.stdout.text).toBe('150000 100000\n(1024, 1024)\npython3\n');
  });

  it('runs with no log file, a private IPC namespace and no docker-init, as the engine reports it', async () => {
    const [info] = await docker.listContainers({
      filters: { label: [`${containerLabels.session}=${session.id}`] },
    });
    expect(info).toBeDefined();
    const inspected = await docker.getContainer(info!.Id).inspect();
    expect(inspected.HostConfig.LogConfig).toEqual({ Type: 'none', Config: {} });
    expect(inspected.HostConfig.IpcMode).toBe('private');
    expect(inspected.HostConfig.Init).toBe(false);
    expect(inspected.HostConfig.NanoCpus).toBe(1.5e9);
    expect(inspected.HostConfig.NetworkMode).toBe('none');
    expect(inspected.HostConfig.ReadonlyRootfs).toBe(true);
    expect(inspected.HostConfig.CapDrop).toEqual(['ALL']);
  });

  it('stops a file bigger than the file-size limit', async () => {
    const small = await createSandbox({ limits: { maxFileBytes: 1024 * 1024 } });
    try {
      const result = await small.execute(
        'with open("big.bin", "wb") as f:\n    f.write(b"x" * (2 * 1024 * 1024))',
      );
      expect(result.status).toBe('error');
      expect(result.error?.name).toBe('OSError');
      expect(result.error?.value).toContain('File too large');
    } finally {
      await small.close();
    }
  });
});
