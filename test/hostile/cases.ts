import { expect } from 'vitest';
import type { CellResult, SandboxLimits, SandboxSession } from '../../src/sandbox/index.ts';

/**
 * The hostile-code table: each case is a short cell that a model (or a data
 * file steering it) could write, the safe outcome the sandbox must produce,
 * and a check of that outcome. hostile.docker.test.ts runs every case in a
 * fresh session, then checks that the session (or, for the few cases that kill
 * the kernel's supervisor, a new session) still runs `1 + 1`.
 */

export interface HostileContext {
  readonly session: SandboxSession;
  /** Host folder the session's workspace was copied from. */
  readonly workspaceDir: string;
  /** A value set in the environment of the test process; it must never reach a container. */
  readonly hostCanary: string;
  /** Starts another session (closed by the harness). */
  createSession(options?: {
    workspaceDir?: string;
    limits?: Partial<SandboxLimits>;
  }): Promise<SandboxSession>;
  /** Adds what was observed to the case's row of the outcome table. */
  note(text: string): void;
}

export interface FollowUp {
  code: string;
  check(result: CellResult): void;
}

export interface HostileCase {
  id: string;
  /** What the cell tries. */
  attack: string;
  /** What must happen instead. */
  safeOutcome: string;
  code: string;
  /** Run before the attack in the same session (state that must survive it). */
  setup?: string;
  limits?: Partial<SandboxLimits>;
  /** Cell timeout of the attack; default 20 s. */
  timeoutMs?: number;
  /**
   * The cell may kill the supervisor itself (it runs as the same user as the
   * cell): the session then ends with SandboxFailureError and a new session
   * must work. Every other case must leave the same session usable.
   */
  mayEndSession?: boolean;
  /** After the case, only the supervisor (PID 1) and the worker may remain in the container. */
  noStrayProcesses?: boolean;
  verify(result: CellResult, context: HostileContext): void | Promise<void>;
  /** Cells run after `1 + 1` in the same session, each with its own check. */
  followUps?: FollowUp[];
  /**
   * Where the outcome under gVisor (the runsc project) differs and is still
   * safe: what happens instead, and its check. Each is explained in
   * src/sandbox/README.md ("Runtimes: runc, and gVisor").
   */
  underGvisor?: Partial<Pick<HostileCase, 'safeOutcome' | 'mayEndSession' | 'verify'>>;
}

/** The runtime the suite runs under: the docker project's runc, or the runsc project's gVisor. */
export const hostileRuntime: 'runc' | 'runsc' =
  process.env['DATALYST_RUNTIME'] === 'runsc' ? 'runsc' : 'runc';

/** The cases as they must come out under `runtime`. */
export function hostileCasesFor(runtime: 'runc' | 'runsc'): HostileCase[] {
  return runtime === 'runc'
    ? hostileCases
    : hostileCases.map((hostileCase) => ({ ...hostileCase, ...hostileCase.underGvisor }));
}

/** gVisor answers these syscalls from its own kernel: any answer, the session goes on. */
function expectGvisorAnswered(result: CellResult, names: string[]): void {
  expectStatus(result, 'ok');
  for (const name of names) {
    expect(
      stdoutLines(result).some((line) => line.startsWith(`${name} `)),
      describeResult(result),
    ).toBe(true);
  }
}

/** Under gVisor, RLIMIT_AS below the memory limit turns a memory bomb into the cell's MemoryError. */
function expectMemoryErrorStateKept(result: CellResult): void {
  expectStatus(result, 'error');
  expect(result.error?.name, describeResult(result)).toMatch(/MemoryError/);
  expect(result.stateLost).toBe(false);
}

const sessionMayEndUnderGvisor =
  'the process flood is charged to the sandbox as a whole (gVisor kernel included): the host may end the session with SandboxFailureError (no hang); a new session works';

/**
 * Python source: `\` stays literal (String.raw), an interpolated block takes
 * the indentation of the line it is placed on, and the common indentation is
 * removed.
 */
function python(strings: TemplateStringsArray, ...values: unknown[]): string {
  let text = strings.raw[0] ?? '';
  values.forEach((value, index) => {
    const indentation = /\n([ ]*)$/.exec(text)?.[1] ?? '';
    text += String(value).replace(/\n/g, `\n${indentation}`) + (strings.raw[index + 1] ?? '');
  });
  const lines = text
    .replace(/^\n/, '')
    .replace(/\n\s*$/, '')
    .split('\n');
  const indent = Math.min(
    ...lines.filter((line) => line.trim() !== '').map((line) => /^ */.exec(line)?.[0].length ?? 0),
  );
  return lines.map((line) => line.slice(indent)).join('\n');
}

function expectStatus(result: CellResult, ...statuses: CellResult['status'][]): void {
  expect(statuses, describeResult(result)).toContain(result.status);
}

/** One line about a result, for the outcome table and failure messages. */
export function describeResult(result: CellResult): string {
  const parts = [`status=${result.status}`];
  if (result.stateLost) parts.push('stateLost');
  if (result.error) parts.push(`${result.error.name}: ${result.error.value.slice(0, 80)}`);
  const stdout = result.stdout.text.trim();
  if (stdout) parts.push(`stdout ${result.stdout.totalBytes} B: "${oneLine(stdout, 160)}"`);
  if (result.stdout.truncated) parts.push('stdout truncated');
  if (result.stderr.truncated) parts.push('stderr truncated');
  return parts.join(', ');
}

export function oneLine(text: string, maxChars: number): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > maxChars ? flat.slice(0, maxChars - 1) + '…' : flat;
}

function stdoutLines(result: CellResult): string[] {
  return result.stdout.text.split('\n').filter((line) => line !== '');
}

/** Every syscall probe prints `name result errno`; the result must be -1 and the errno a refusal. */
function expectSyscallsRefused(result: CellResult, names: string[]): void {
  expectStatus(result, 'ok');
  for (const name of names) {
    const line = stdoutLines(result).find((entry) => entry.startsWith(`${name} `));
    expect(line, describeResult(result)).toBeDefined();
    expect(line, describeResult(result)).toMatch(new RegExp(`^${name} -1 (EPERM|EACCES|ENOSYS)$`));
  }
}

// Raw syscall numbers for the machines Datalyst runs on.
const syscallPrelude = python`
  import ctypes, errno, os, platform
  libc = ctypes.CDLL(None, use_errno=True)
  NUMBERS = {
      'x86_64': {'unshare': 272, 'keyctl': 250, 'bpf': 321, 'perf_event_open': 298, 'io_uring_setup': 425,
                 'ptrace': 101, 'process_vm_readv': 310, 'mount': 165, 'userfaultfd': 323, 'setns': 308},
      'aarch64': {'unshare': 97, 'keyctl': 219, 'bpf': 280, 'perf_event_open': 241, 'io_uring_setup': 425,
                  'ptrace': 117, 'process_vm_readv': 270, 'mount': 40, 'userfaultfd': 282, 'setns': 268},
  }[platform.machine()]
  def probe(name, *args):
      result = libc.syscall(NUMBERS[name], *args)
      code = ctypes.get_errno()
      print(name, result, errno.errorcode.get(code, code) if result < 0 else 'none')
`;

/** Lists the container's processes as `name:state`; a follow-up cell evaluates it. */
export const processListCode =
  "sorted(open(f'/proc/{p}/stat').read().split(') ')[0].split('(')[1] + ':' + open(f'/proc/{p}/stat').read().split(') ')[1][0] for p in __import__('os').listdir('/proc') if p.isdigit())";

const minimalXlsxParts = python`
  CONTENT_TYPES = b'<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>'
  RELS = b'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>'
  WORKBOOK = b'<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Data" sheetId="1" r:id="rId1"/></sheets></workbook>'
  WORKBOOK_RELS = b'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>'
`;

/** Writes bomb.xlsx: about 100 MB of sheet XML that deflates to a few hundred KB. */
export const writeZipBombCode = python`
  import os, zipfile
  ${minimalXlsxParts}
  with zipfile.ZipFile('bomb.xlsx', 'w', zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
      archive.writestr('[Content_Types].xml', CONTENT_TYPES)
      archive.writestr('_rels/.rels', RELS)
      archive.writestr('xl/workbook.xml', WORKBOOK)
      archive.writestr('xl/_rels/workbook.xml.rels', WORKBOOK_RELS)
      with archive.open('xl/worksheets/sheet1.xml', 'w') as sheet:
          sheet.write(b'<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>')
          block = b'<row><c><v>1</v></c><c><v>2</v></c></row>' * 10_000
          for _ in range(300):
              sheet.write(block)
          sheet.write(b'</sheetData></worksheet>')
  print('bomb bytes', os.path.getsize('bomb.xlsx'))
`;

/** Network probes print `CONNECTED`, `RESOLVED` or `SENT` only when the attempt got through. */
function expectNothingGotOut(result: CellResult): void {
  expectStatus(result, 'ok');
  expect(result.stdout.text, describeResult(result)).not.toMatch(/CONNECTED|RESOLVED|SENT/);
  expect(result.stdout.text, describeResult(result)).toContain('refused');
}

export const hostileCases: HostileCase[] = [
  // ---------------------------------------------------------------- processes
  {
    id: 'fork-bomb',
    attack: 'every process forks forever',
    safeOutcome:
      'the pids limit caps it; at the timeout the supervisor kills every copy: none stays alive (killed copies may stay zombies, no CPU, until the worker waits)',
    limits: { pidsLimit: 128, interruptGraceMs: 1_000 },
    timeoutMs: 4_000,
    code: python`
      import os
      while True:
          try:
              os.fork()
          except OSError:
              pass
    `,
    noStrayProcesses: true,
    verify(result) {
      expectStatus(result, 'timeout', 'crashed');
    },
    underGvisor: {
      mayEndSession: true,
      safeOutcome: `RLIMIT_NPROC (= pidsLimit under gVisor) caps it; ${sessionMayEndUnderGvisor}`,
    },
  },
  {
    id: 'thread-bomb',
    attack: 'start threads until the system refuses',
    safeOutcome: 'the pids limit refuses new threads with an error the cell can see',
    limits: { pidsLimit: 128 },
    code: python`
      import threading, time
      started = 0
      try:
          while True:
              threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()
              started += 1
      except RuntimeError as error:
          print('refused after', started, 'threads:', error)
    `,
    verify(result, context) {
      expectStatus(result, 'ok');
      const match = /refused after (\d+) threads/.exec(result.stdout.text);
      expect(match, describeResult(result)).not.toBeNull();
      expect(Number(match?.[1])).toBeLessThan(128);
      context.note(`refused after ${match?.[1]} threads`);
    },
  },
  {
    id: 'memory-many-appends',
    attack: 'append 16 MiB blocks to a list forever',
    safeOutcome: 'OOM kill of the worker reported as `memory`, kernel restarted, state lost',
    limits: { memoryMb: 512 },
    timeoutMs: 60_000,
    code: python`
      blocks = []
      while True:
          blocks.append(b'\x01' * (16 * 1024 * 1024))
    `,
    verify(result) {
      expectStatus(result, 'memory');
      expect(result.stateLost).toBe(true);
    },
    underGvisor: {
      safeOutcome: 'MemoryError in the cell (RLIMIT_AS below the memory limit); state kept',
      verify: expectMemoryErrorStateKept,
    },
  },
  {
    id: 'memory-one-huge-allocation',
    attack: 'allocate 1 TiB at once',
    safeOutcome: 'MemoryError in the cell; state kept',
    setup: 'kept = 41',
    code: 'block = bytearray(1 << 40)',
    verify(result) {
      expectStatus(result, 'error');
      expect(result.error?.name).toBe('MemoryError');
      expect(result.stateLost).toBe(false);
    },
    followUps: [{ code: 'kept + 1', check: (result) => expect(result.value).toBe('42') }],
  },
  {
    id: 'memory-huge-array-filled',
    attack: 'fill a 2 GiB numpy array in a 512 MiB sandbox',
    safeOutcome: 'OOM kill reported as `memory`; kernel restarted',
    limits: { memoryMb: 512 },
    timeoutMs: 60_000,
    code: 'import numpy as np\nbig = np.ones(2 * 1024**3 // 8)',
    verify(result) {
      expectStatus(result, 'memory');
      expect(result.stateLost).toBe(true);
    },
    underGvisor: {
      safeOutcome: 'MemoryError in the cell (RLIMIT_AS below the memory limit); state kept',
      verify: expectMemoryErrorStateKept,
    },
  },
  {
    id: 'busy-loop-past-timeout',
    attack: 'spin forever in Python bytecode',
    safeOutcome: 'interrupted at the timeout; variables kept',
    setup: 'kept = 41',
    timeoutMs: 2_000,
    code: 'while True:\n    pass',
    verify(result) {
      expectStatus(result, 'timeout');
      expect(result.stateLost).toBe(false);
    },
    followUps: [{ code: 'kept + 1', check: (result) => expect(result.value).toBe('42') }],
  },
  {
    id: 'sleep-past-timeout',
    attack: 'sleep for an hour',
    safeOutcome: 'interrupted at the timeout; variables kept',
    timeoutMs: 2_000,
    code: 'import time\ntime.sleep(3600)',
    verify(result) {
      expectStatus(result, 'timeout');
      expect(result.stateLost).toBe(false);
    },
  },
  {
    id: 'interrupt-ignored',
    attack: 'ignore SIGINT, SIGTERM and SIGHUP, then spin',
    safeOutcome: 'killed after the grace period; kernel restarted; state lost (and said so)',
    limits: { interruptGraceMs: 1_000 },
    timeoutMs: 2_000,
    code: python`
      import signal
      for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
          signal.signal(number, signal.SIG_IGN)
      while True:
          pass
    `,
    noStrayProcesses: true,
    verify(result) {
      expectStatus(result, 'timeout');
      expect(result.stateLost).toBe(true);
    },
  },
  {
    id: 'uninterruptible-c-loop',
    attack: 'a long loop inside C code (sum over a huge range) that never checks for signals',
    safeOutcome: 'killed after the grace period; kernel restarted; state lost',
    limits: { interruptGraceMs: 1_000 },
    timeoutMs: 2_000,
    code: 'sum(range(10**15))',
    verify(result) {
      expectStatus(result, 'timeout');
      expect(result.stateLost).toBe(true);
    },
  },
  {
    id: 'sigterm-ignoring-child',
    attack: 'start a shell that ignores SIGTERM/SIGINT/SIGHUP and spins, then wait on it',
    safeOutcome:
      'the cell is interrupted at its timeout (state kept) and the supervisor SIGKILLs the child with it: nothing keeps spinning',
    timeoutMs: 3_000,
    code: python`
      import subprocess
      child = subprocess.Popen(['sh', '-c', 'trap "" TERM INT HUP; while :; do :; done'])
      child.wait()
    `,
    noStrayProcesses: true,
    verify(result) {
      expectStatus(result, 'timeout');
      expect(result.stateLost).toBe(false);
    },
  },
  {
    id: 'double-forked-daemon',
    attack: 'a double-forked, setsid daemon that keeps writing after the cell ends',
    safeOutcome: 'the supervisor kills it when the cell ends: its heartbeat file stops growing',
    code: python`
      import os, time
      if os.fork() == 0:
          os.setsid()
          if os.fork() == 0:
              while True:
                  with open('daemon-heartbeat.txt', 'a') as handle:
                      handle.write('beat\n')
                  time.sleep(0.05)
          os._exit(0)
      os.wait()
      time.sleep(0.3)
      print('daemon started')
    `,
    noStrayProcesses: true,
    verify(result) {
      expectStatus(result, 'ok');
      expect(result.stdout.text).toContain('daemon started');
    },
    followUps: [
      {
        code: python`
          import os, time
          size_before = os.path.getsize('daemon-heartbeat.txt')
          time.sleep(0.5)
          os.path.getsize('daemon-heartbeat.txt') == size_before
        `,
        check: (result) => expect(result.value).toBe('True'),
      },
    ],
  },
  {
    id: 'zombies',
    attack: 'fork children that exit and are never waited for, until fork fails',
    safeOutcome: 'the zombies count against the pids limit only; the session keeps running cells',
    limits: { pidsLimit: 128 },
    code: python`
      import os
      made = 0
      try:
          for _ in range(1000):
              if os.fork() == 0:
                  os._exit(0)
              made += 1
      except OSError as error:
          print('fork refused:', error.strerror)
      print('zombies left:', made)
    `,
    verify(result, context) {
      expectStatus(result, 'ok');
      expect(result.stdout.text).toContain('fork refused');
      context.note(oneLine(result.stdout.text, 80));
    },
    underGvisor: {
      mayEndSession: true,
      safeOutcome: `fork is refused at RLIMIT_NPROC, or ${sessionMayEndUnderGvisor}`,
    },
  },
  {
    id: 'signal-init-process',
    attack:
      'send SIGTERM, SIGHUP, SIGINT, SIGUSR1, SIGTSTP and SIGKILL to PID 1 (the supervisor: there is no docker-init)',
    safeOutcome:
      "the kernel drops them (PID 1 of the container's namespace handles none of them): the same session keeps working",
    code: python`
      import os, signal, time
      for number in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGUSR1, signal.SIGTSTP, signal.SIGKILL):
          try:
              os.kill(1, number)
              print('sent', number.name)
          except OSError as error:
              print(number.name, 'refused:', error.strerror)
      time.sleep(1)
      'survived'
    `,
    verify(result) {
      expectStatus(result, 'ok');
      expect(result.value).toBe("'survived'");
    },
    underGvisor: {
      mayEndSession: true,
      safeOutcome:
        'gVisor lets the signals reach the container init and the session ends with SandboxFailureError at once (no hang); a new session works',
    },
  },
  {
    id: 'kill-every-process',
    attack: 'kill(-1, SIGKILL) from a child of the worker: every process the cell may signal',
    safeOutcome:
      'the worker dies (`crashed`, kernel restarted, state lost); the supervisor is PID 1, which kill(-1) never reaches: the same session keeps working',
    // From a child: kill(-1) spares the caller, so the worker itself would survive its own call.
    code: "import subprocess\nsubprocess.run(['python3', '-c', 'import os, signal; os.kill(-1, signal.SIGKILL)'])",
    verify(result) {
      expectStatus(result, 'crashed');
      expect(result.stateLost).toBe(true);
      expect(result.statusDetail).toContain('was restarted');
    },
  },
  {
    id: 'kill-supervisor',
    attack: 'SIGKILL and SIGTERM the parent process (the kernel supervisor, PID 1)',
    safeOutcome:
      "the kernel drops both (PID 1 of the container's namespace, no handler): the same cell goes on, the session keeps working",
    code: python`
      import os, signal
      print('parent', os.getppid())
      os.kill(os.getppid(), signal.SIGKILL)
      os.kill(os.getppid(), signal.SIGTERM)
      'survived'
    `,
    verify(result) {
      expectStatus(result, 'ok');
      expect(result.stdout.text).toBe('parent 1\n');
      expect(result.value).toBe("'survived'");
    },
    // As for signal-init-process: this gVisor delivers them to the container's init.
    underGvisor: {
      mayEndSession: true,
      safeOutcome:
        'gVisor lets the signals reach the container init and the session ends with SandboxFailureError at once (no hang); a new session works',
      verify(result) {
        expectStatus(result, 'ok', 'crashed', 'error');
      },
    },
  },
  {
    id: 'exit-the-kernel',
    attack: 'os._exit(0) from the cell',
    safeOutcome: '`crashed`, kernel restarted, state lost; same session continues',
    code: 'import os\nos._exit(0)',
    verify(result) {
      expectStatus(result, 'crashed');
      expect(result.stateLost).toBe(true);
    },
  },
  {
    id: 'segfault',
    attack: 'dereference NULL through ctypes',
    safeOutcome: '`crashed` (signal 11), kernel restarted, state lost',
    code: 'import ctypes\nctypes.string_at(0)',
    verify(result) {
      expectStatus(result, 'crashed');
      expect(result.stateLost).toBe(true);
    },
  },
  {
    id: 'deep-recursion',
    attack: 'recursion limit raised to 10^9, then infinite recursion',
    safeOutcome: 'an error, a crash or an OOM kill of the worker only; the session continues',
    limits: { memoryMb: 512 },
    timeoutMs: 30_000,
    code: python`
      import sys
      sys.setrecursionlimit(10**9)
      def dive(depth):
          return dive(depth + 1)
      dive(0)
    `,
    verify(result) {
      expectStatus(result, 'error', 'crashed', 'memory', 'timeout');
    },
  },
  // ------------------------------------------------------------------- output
  {
    id: 'stdout-flood',
    attack: 'print 1 000-character lines forever',
    safeOutcome: '`output-limit` with the kept text capped at maxOutputBytes',
    limits: { maxOutputBytes: 64 * 1024 },
    code: "while True:\n    print('x' * 1000)",
    verify(result) {
      expectStatus(result, 'output-limit');
      expect(result.stdout.truncated).toBe(true);
      expect(Buffer.byteLength(result.stdout.text)).toBeLessThanOrEqual(64 * 1024);
    },
  },
  {
    id: 'giant-line',
    attack: 'write one 300 MB line with no newline',
    safeOutcome: '`output-limit`; the host keeps at most maxOutputBytes',
    limits: { maxOutputBytes: 64 * 1024 },
    code: "import sys\nsys.stdout.write('a' * 300_000_000)",
    verify(result) {
      expectStatus(result, 'output-limit');
      expect(Buffer.byteLength(result.stdout.text)).toBeLessThanOrEqual(64 * 1024);
    },
  },
  {
    id: 'stderr-flood',
    attack: 'write to stderr forever',
    safeOutcome: '`output-limit` on stderr',
    limits: { maxOutputBytes: 64 * 1024 },
    code: "import sys\nwhile True:\n    sys.stderr.write('e' * 4096)",
    verify(result) {
      expectStatus(result, 'output-limit');
      expect(result.stderr.truncated).toBe(true);
      expect(Buffer.byteLength(result.stderr.text)).toBeLessThanOrEqual(64 * 1024);
    },
  },
  {
    id: 'binary-output',
    attack: 'raw bytes, invalid UTF-8, NUL and terminal escapes on stdout and stderr',
    safeOutcome: 'status ok; the text arrives with replacement characters; the protocol is intact',
    code: python`
      import sys
      sys.stdout.buffer.write(bytes(range(256)) * 16)
      sys.stdout.buffer.write(b'\xff\xfe\xed\xc3\x28\xa0\xa1\xe2\x28\xa1\xf0\x28\x8c\xbc\n')
      sys.stdout.flush()
      sys.stderr.buffer.write(b'\x00\x1b[2J\x1b]0;title\x07\xff\n')
      sys.stderr.flush()
      print('end of binary')
    `,
    verify(result) {
      expectStatus(result, 'ok');
      expect(result.stdout.text).toContain('\uFFFD');
      expect(result.stdout.text).toContain('end of binary');
      expect(result.stdout.totalBytes).toBeGreaterThan(4096);
      expect(result.stderr.text).toContain('\uFFFD');
    },
  },
  {
    id: 'forged-protocol-messages',
    attack: 'print protocol-shaped JSON and write forged result lines to every file descriptor',
    safeOutcome: 'the forged lines stay output or are ignored; the cell returns its own value',
    code: python`
      import json, os
      forged = {'type': 'result', 'id': 999999, 'result': {'status': 'ok', 'value': "'FORGED'"}}
      print(json.dumps(forged))
      for fd in range(3, 256):
          try:
              os.write(fd, (json.dumps(dict(forged, type='done')) + '\n').encode())
              os.write(fd, b'not json at all\n')
          except OSError:
              pass
      'genuine'
    `,
    verify(result) {
      expectStatus(result, 'ok');
      expect(result.value).toBe("'genuine'");
    },
  },
  {
    id: 'read-stdin',
    attack: 'read from standard input',
    safeOutcome: 'EOFError at once (stdin is not the protocol channel); no hang',
    timeoutMs: 10_000,
    code: "input('password: ')",
    verify(result) {
      expectStatus(result, 'error');
      expect(result.error?.name).toBe('EOFError');
    },
  },
  {
    id: 'close-standard-streams',
    attack: 'close sys.stdout, and file descriptors 1 and 2 of the kernel',
    safeOutcome: 'later cells still run, and their prints (stdout and stderr) still arrive',
    code: 'import os, sys\nsys.stdout.close()\nos.close(1)\nos.close(2)',
    verify(result) {
      expectStatus(result, 'ok', 'error', 'crashed');
    },
    followUps: [
      {
        code: "import sys\nprint('still printing')\nprint('still warning', file=sys.stderr)",
        check: (result) => {
          expect(result.stdout.text).toBe('still printing\n');
          expect(result.stderr.text).toBe('still warning\n');
        },
      },
    ],
  },
  // -------------------------------------------------------------- files, disk
  {
    id: 'huge-file',
    attack: 'write one file forever',
    safeOutcome: 'the file-size limit or the sized working directory stops it with an error the cell sees',
    timeoutMs: 60_000,
    code: python`
      chunk = b'\0' * (1 << 20)
      written = 0
      try:
          with open('huge.bin', 'wb') as handle:
              while True:
                  handle.write(chunk)
                  written += 1
      except OSError as error:
          print('stopped after', written, 'MiB:', error.strerror)
    `,
    verify(result, context) {
      expectStatus(result, 'ok');
      const match = /stopped after (\d+) MiB: (.*)/.exec(result.stdout.text);
      expect(match, describeResult(result)).not.toBeNull();
      expect(Number(match?.[1])).toBeLessThanOrEqual(1024);
      context.note(match?.[0] ?? '');
    },
    followUps: [
      { code: "import os\nos.remove('huge.bin')", check: (result) => expect(result.status).toBe('ok') },
    ],
  },
  {
    id: 'fill-tmp',
    attack: 'fill /tmp',
    safeOutcome: 'ENOSPC at the tmpfs size; the session and figure capture keep working',
    timeoutMs: 60_000,
    code: python`
      written = 0
      try:
          with open('/tmp/filler', 'wb') as handle:
              while True:
                  handle.write(b'\0' * (1 << 20))
                  written += 1
      except OSError as error:
          print('stopped after', written, 'MiB:', error.strerror)
    `,
    verify(result, context) {
      expectStatus(result, 'ok');
      expect(result.stdout.text).toContain('No space left on device');
      context.note(oneLine(result.stdout.text, 80));
    },
    followUps: [
      {
        code: 'import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nNone',
        check: (result) => expect(result.figures.length).toBe(1),
      },
    ],
  },
  {
    id: 'write-outside-workdir',
    attack: 'write to /, /usr, /etc/passwd, the kernel program, the home folder, /var/tmp',
    safeOutcome: 'every write refused (read-only root filesystem, non-root user)',
    code: python`
      targets = ['/pwned', '/usr/pwned', '/usr/lib/python3/dist-packages/pandas/__init__.py', '/etc/passwd',
                 '/opt/datalyst/supervisor.py', '/home/analyst/.profile', '/var/tmp/pwned', '/sys/kernel/pwned']
      for path in targets:
          try:
              with open(path, 'a') as handle:
                  handle.write('pwned')
              print('WROTE', path)
          except OSError as error:
              print('refused', path, error.strerror)
    `,
    verify(result) {
      expectStatus(result, 'ok');
      expect(result.stdout.text).not.toContain('WROTE');
      expect(stdoutLines(result).filter((line) => line.startsWith('refused'))).toHaveLength(8);
    },
  },
  {
    id: 'open-files-until-failure',
    attack: 'open files until the system refuses, and keep them open',
    safeOutcome: 'EMFILE at the nofile limit; the kernel keeps answering',
    code: python`
      handles = []
      try:
          while True:
              handles.append(open('/dev/null'))
      except OSError as error:
          print('refused after', len(handles), 'files:', error.strerror)
    `,
    verify(result, context) {
      expectStatus(result, 'ok');
      expect(result.stdout.text).toContain('Too many open files');
      context.note(oneLine(result.stdout.text, 80));
    },
  },
  // ------------------------------------------------------------------ network
  {
    id: 'tcp-to-outside',
    attack: 'TCP connections to public IPv4 and IPv6 addresses',
    safeOutcome: 'no route: the container has no network',
    code: python`
      import socket
      for host, port in [('1.1.1.1', 443), ('93.184.216.34', 80), ('2606:4700:4700::1111', 443)]:
          try:
              socket.create_connection((host, port), timeout=3).close()
              print('CONNECTED', host)
          except OSError as error:
              print('refused', host, error.strerror or error)
    `,
    verify: expectNothingGotOut,
  },
  {
    id: 'cloud-metadata',
    attack: 'reach the cloud metadata service (169.254.169.254, fd00:ec2::254)',
    safeOutcome: 'no route',
    code: python`
      import socket
      for host in ['169.254.169.254', 'fd00:ec2::254']:
          try:
              socket.create_connection((host, 80), timeout=3).close()
              print('CONNECTED', host)
          except OSError as error:
              print('refused', host, error.strerror or error)
    `,
    verify: expectNothingGotOut,
  },
  {
    id: 'dns-and-udp',
    attack: 'resolve a name, send a UDP datagram to a public resolver, list interfaces',
    safeOutcome: 'resolution fails, the datagram has no route, the only interface is lo',
    code: python`
      import socket
      try:
          print('RESOLVED', socket.getaddrinfo('example.com', 443)[0][4])
      except OSError as error:
          print('refused dns', error)
      try:
          socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('8.8.8.8', 53))
          print('SENT udp')
      except OSError as error:
          print('refused udp', error.strerror)
      print('interfaces', [name for _, name in socket.if_nameindex()])
    `,
    verify(result) {
      expectNothingGotOut(result);
      expect(result.stdout.text).toContain("interfaces ['lo']");
    },
  },
  // ---------------------------------------------------------------- privilege
  {
    id: 'read-etc-shadow',
    attack: 'read /etc/shadow',
    safeOutcome: 'PermissionError (non-root user)',
    code: "open('/etc/shadow').read()",
    verify(result) {
      expectStatus(result, 'error');
      expect(result.error?.name).toBe('PermissionError');
    },
  },
  {
    id: 'docker-socket',
    attack: 'look for the Docker or containerd socket anywhere, and for DOCKER_HOST',
    safeOutcome: 'no socket file in the container, no engine address in the environment',
    timeoutMs: 60_000,
    code: python`
      import os, stat
      found = [path for path in ['/var/run/docker.sock', '/run/docker.sock', '/run/containerd/containerd.sock']
               if os.path.exists(path)]
      for root, dirs, files in os.walk('/'):
          dirs[:] = [name for name in dirs if os.path.join(root, name) not in ('/proc', '/sys')]
          for name in files:
              try:
                  if stat.S_ISSOCK(os.lstat(os.path.join(root, name)).st_mode):
                      found.append(os.path.join(root, name))
              except OSError:
                  pass
      print('sockets', found)
      print('engine variables', [name for name in os.environ if name.startswith('DOCKER')])
    `,
    verify(result) {
      expectStatus(result, 'ok');
      expect(result.stdout.text).toContain('sockets []');
      expect(result.stdout.text).toContain('engine variables []');
    },
  },
  {
    id: 'privilege-state',
    attack: 'inspect own privileges: capabilities, no_new_privs, seccomp, user',
    safeOutcome: 'no capabilities, no_new_privs set, a seccomp filter, uid 1000',
    code: python`
      import os
      fields = dict(line.split(':\t', 1) for line in open('/proc/self/status').read().splitlines() if ':\t' in line)
      for name in ('CapEff', 'CapPrm', 'CapBnd', 'NoNewPrivs', 'Seccomp'):
          print(name, fields.get(name, 'absent').strip())
      print('uid', os.getuid(), os.geteuid())
    `,
    verify(result) {
      expectStatus(result, 'ok');
      const text = result.stdout.text;
      expect(text).toContain('CapEff 0000000000000000');
      expect(text).toContain('CapPrm 0000000000000000');
      expect(text).toContain('CapBnd 0000000000000000');
      expect(text).toContain('NoNewPrivs 1');
      expect(text).toContain('Seccomp 2');
      expect(text).toContain('uid 1000 1000');
    },
    underGvisor: {
      safeOutcome:
        'no capabilities, uid 1000; gVisor shows no NoNewPrivs/Seccomp lines (the engine record has no-new-privileges)',
      verify(result) {
        expectStatus(result, 'ok');
        const text = result.stdout.text;
        expect(text).toContain('CapEff 0000000000000000');
        expect(text).toContain('CapPrm 0000000000000000');
        expect(text).toContain('CapBnd 0000000000000000');
        expect(text).toContain('uid 1000 1000');
      },
    },
  },
  {
    id: 'setuid-root',
    attack: 'os.setuid(0), setgid(0), setgroups([0])',
    safeOutcome: 'PermissionError for each',
    code: python`
      import os
      for name, call in [('setuid', lambda: os.setuid(0)), ('setgid', lambda: os.setgid(0)),
                         ('setgroups', lambda: os.setgroups([0]))]:
          try:
              call()
              print('BECAME', name)
          except PermissionError as error:
              print('refused', name, error.strerror)
    `,
    verify(result) {
      expectStatus(result, 'ok');
      expect(result.stdout.text).not.toContain('BECAME');
      expect(stdoutLines(result)).toHaveLength(3);
    },
  },
  {
    id: 'chmod-4777',
    attack:
      'chmod 4777 system binaries; make an own setuid copy and run it; run the setuid-root mount binary',
    safeOutcome:
      'system files refused; an own setuid file cannot run (noexec working directory) or runs as uid 1000; setuid-root binaries gain nothing (no_new_privs)',
    code: python`
      import os, shutil, stat, subprocess
      for path in ['/usr/bin/python3', '/usr/bin/su']:
          try:
              os.chmod(path, 0o4777)
              print('CHANGED', path)
          except OSError as error:
              print('refused', path, error.strerror)
      shutil.copy('/usr/bin/id', 'own-id')
      os.chmod('own-id', 0o4777)
      print('own copy owner', os.stat('own-id').st_uid, 'setuid bit', bool(os.stat('own-id').st_mode & stat.S_ISUID))
      try:
          print('own copy runs as', subprocess.run(['./own-id', '-u'], capture_output=True, text=True).stdout.strip())
      except PermissionError as error:
          print('own copy refused to run:', error.strerror)
      try:
          mount = subprocess.run(['/usr/bin/mount', '-t', 'tmpfs', 'none', '/mnt'], capture_output=True, text=True)
          print('setuid mount exit', mount.returncode, mount.stderr.strip())
      except PermissionError as error:
          print('setuid mount refused to run:', error.strerror)
    `,
    verify(result, context) {
      expectStatus(result, 'ok');
      expect(result.stdout.text).not.toContain('CHANGED');
      expect(result.stdout.text).toContain('own copy owner 1000');
      expect(result.stdout.text).toMatch(/own copy runs as 1000|own copy refused to run/);
      // gVisor refuses to run a setuid binary under no_new_privs at all (EPERM).
      expect(result.stdout.text).toMatch(/setuid mount exit [1-9]|setuid mount refused to run/);
      context.note(oneLine(result.stdout.text.split('\n').slice(3).join(' '), 160));
    },
  },
  {
    id: 'mount',
    attack: 'mount a tmpfs through the raw syscall',
    safeOutcome: 'EPERM',
    code: `${syscallPrelude}\nprobe('mount', b'none', b'/mnt', b'tmpfs', 0, None)`,
    verify: (result) => expectSyscallsRefused(result, ['mount']),
  },
  {
    id: 'unshare-user-namespace',
    attack: 'unshare(CLONE_NEWUSER) by raw syscall and os.unshare, setns',
    safeOutcome: 'refused: no new namespace to regain capabilities in',
    code: python`
      ${syscallPrelude}
      probe('unshare', 0x10000000)
      probe('setns', 0, 0x10000000)
      try:
          os.unshare(os.CLONE_NEWUSER | os.CLONE_NEWNS)
          print('os.unshare SUCCEEDED')
      except OSError as error:
          print('os.unshare refused', error.strerror)
    `,
    verify(result) {
      expectSyscallsRefused(result, ['unshare', 'setns']);
      expect(result.stdout.text).toContain('os.unshare refused');
    },
    underGvisor: {
      safeOutcome:
        "gVisor's own kernel answers (a namespace inside the sandbox holds no host capability); the session goes on",
      verify: (result) => expectGvisorAnswered(result, ['unshare', 'setns']),
    },
  },
  {
    id: 'keyctl',
    attack: 'keyctl by raw syscall',
    safeOutcome: 'EPERM',
    code: `${syscallPrelude}\nprobe('keyctl', 0, 0, 0, 0, 0)`,
    verify: (result) => expectSyscallsRefused(result, ['keyctl']),
  },
  {
    id: 'bpf',
    attack: 'bpf by raw syscall',
    safeOutcome: 'EPERM',
    code: `${syscallPrelude}\nprobe('bpf', 0, 0, 0)`,
    verify: (result) => expectSyscallsRefused(result, ['bpf']),
  },
  {
    id: 'perf-event-open',
    attack: 'perf_event_open by raw syscall',
    safeOutcome: 'EPERM or EACCES',
    code: `${syscallPrelude}\nprobe('perf_event_open', 0, 0, -1, -1, 0)`,
    verify: (result) => expectSyscallsRefused(result, ['perf_event_open']),
    underGvisor: {
      safeOutcome: 'refused by gVisor (ENODEV: no perf events)',
      verify(result) {
        expectStatus(result, 'ok');
        expect(result.stdout.text).toMatch(/^perf_event_open -1 (EPERM|EACCES|ENOSYS|ENODEV)$/m);
      },
    },
  },
  {
    id: 'io-uring-setup',
    attack: 'io_uring_setup by raw syscall',
    safeOutcome: 'EPERM (Datalyst seccomp profile; Docker 20.10 default profile allows it)',
    code: `${syscallPrelude}\nparams = ctypes.create_string_buffer(120)\nprobe('io_uring_setup', 1, params)`,
    verify: (result) => expectSyscallsRefused(result, ['io_uring_setup']),
    underGvisor: {
      safeOutcome: "gVisor's own io_uring answers; no host io_uring is reached",
      verify: (result) => expectGvisorAnswered(result, ['io_uring_setup']),
    },
  },
  {
    id: 'ptrace-supervisor',
    attack: 'ptrace-attach to the supervisor and to init; read the supervisor memory; userfaultfd',
    safeOutcome: 'refused: a cell cannot inspect or steer the process that reports on it',
    code: python`
      ${syscallPrelude}
      probe('ptrace', 16, os.getppid(), 0, 0)
      libc.syscall(NUMBERS['ptrace'], 17, os.getppid(), 0, 0)
      print('init', end=' ')
      probe('ptrace', 16, 1, 0, 0)
      libc.syscall(NUMBERS['ptrace'], 17, 1, 0, 0)
      local = (ctypes.c_char * 64)()
      local_iov = (ctypes.c_void_p * 2)(ctypes.cast(local, ctypes.c_void_p), 64)
      remote_iov = (ctypes.c_void_p * 2)(0x400000, 64)
      probe('process_vm_readv', os.getppid(), local_iov, 1, remote_iov, 1, 0)
      probe('userfaultfd', 0)
    `,
    verify(result) {
      expectSyscallsRefused(result, ['ptrace', 'process_vm_readv', 'userfaultfd']);
      expect(result.stdout.text).toMatch(/^init ptrace -1 (EPERM|EACCES)$/m);
    },
  },
  {
    id: 'cgroup-and-sysctl-tamper',
    attack: 'raise own memory and pids limits, change sysctls, trigger sysrq',
    safeOutcome: 'every write refused (read-only /sys and /proc/sys)',
    code: python`
      import glob
      targets = (glob.glob('/sys/fs/cgroup/memory/memory.limit_in_bytes') + glob.glob('/sys/fs/cgroup/memory.max')
                 + glob.glob('/sys/fs/cgroup/pids/pids.max') + glob.glob('/sys/fs/cgroup/pids.max')
                 + ['/proc/sys/vm/overcommit_memory', '/proc/sys/kernel/core_pattern', '/proc/sysrq-trigger'])
      for path in targets:
          try:
              with open(path, 'w') as handle:
                  handle.write('max\n')
              print('WROTE', path)
          except OSError as error:
              print('refused', path, error.strerror)
    `,
    verify(result) {
      expectStatus(result, 'ok');
      expect(result.stdout.text).not.toContain('WROTE');
      expect(stdoutLines(result).length).toBeGreaterThanOrEqual(4);
    },
    underGvisor: {
      safeOutcome: 'every write refused; gVisor shows no cgroup files at all',
      verify(result) {
        expectStatus(result, 'ok');
        expect(result.stdout.text).not.toContain('WROTE');
        expect(stdoutLines(result).length).toBeGreaterThanOrEqual(3);
      },
    },
  },
  {
    id: 'environment-secrets',
    attack: 'read the environment of the kernel and of init for host secrets',
    safeOutcome: 'nothing of the host environment reaches the container',
    code: python`
      import os
      print('\n'.join('%s=%s' % item for item in os.environ.items()))
      for pid in ('1', str(os.getppid())):
          try:
              print(open('/proc/%s/environ' % pid, 'rb').read().replace(b'\0', b'\n').decode())
          except OSError as error:
              print('environ of', pid, 'refused', error.strerror)
    `,
    verify(result, context) {
      expectStatus(result, 'ok');
      expect(result.stdout.text).not.toContain(context.hostCanary);
      expect(result.stdout.text).not.toMatch(/OPENAI|API_KEY|DOCKER_HOST|AWS_/);
    },
  },
  // ------------------------------------------------- artifacts and the host side
  {
    id: 'symlink-artifacts',
    attack: 'artifacts that are symlinks to /etc/hostname, /etc, and /proc/self/root/etc/passwd',
    safeOutcome:
      'the host never follows them: links are neither reported nor read, only the regular file comes back',
    code: python`
      import os
      os.symlink('/etc/hostname', 'summary.txt')
      os.symlink('/etc', 'etc-link')
      os.symlink('/proc/self/root/etc/passwd', 'passwd.csv')
      with open('real.txt', 'w') as handle:
          handle.write('regular')
    `,
    async verify(result, context) {
      expectStatus(result, 'ok');
      expect(result.files.map((file) => file.path)).toEqual(['real.txt']);
      const files = await context.session.readFiles([
        'summary.txt',
        'etc-link/passwd',
        'etc-link/hostname',
        'passwd.csv',
        'real.txt',
      ]);
      expect(files.map((file) => file.path)).toEqual(['real.txt']);
      expect(Buffer.from(files[0]?.bytes ?? []).toString()).toBe('regular');
    },
  },
  {
    id: 'symlink-swap-race',
    attack:
      'a thread swaps an artifact between a regular file and a symlink to /etc/passwd while the host reads it',
    safeOutcome: 'every read returns the regular file or nothing; never the link target',
    code: python`
      import os, threading
      stop_race = threading.Event()
      def flip():
          while not stop_race.is_set():
              try:
                  os.remove('race.txt')
              except FileNotFoundError:
                  pass
              with open('race.txt', 'w') as handle:
                  handle.write('SAFE')
              os.remove('race.txt')
              os.symlink('/etc/passwd', 'race.txt')
      threading.Thread(target=flip, daemon=True).start()
    `,
    async verify(result, context) {
      expectStatus(result, 'ok');
      let regular = 0;
      for (let attempt = 0; attempt < 300; attempt += 1) {
        for (const file of await context.session.readFiles(['race.txt'])) {
          const text = Buffer.from(file.bytes).toString();
          expect(['SAFE', '']).toContain(text);
          regular += 1;
        }
      }
      context.note(`${regular} of 300 reads saw the regular file, the rest were refused`);
    },
    followUps: [{ code: 'stop_race.set()', check: (result) => expect(result.status).toBe('ok') }],
  },
  {
    id: 'hardlinks',
    attack: 'hard-link /etc/passwd, /etc/shadow and python3 into the working directory',
    safeOutcome:
      'refused (another filesystem, protected hardlinks); nothing outside the workdir is collected',
    code: python`
      import os
      for target in ['/etc/passwd', '/etc/shadow', '/usr/bin/python3']:
          try:
              os.link(target, os.path.basename(target) + '.link')
              print('LINKED', target)
          except OSError as error:
              print('refused', target, error.strerror)
    `,
    async verify(result) {
      expectStatus(result, 'ok');
      expect(result.stdout.text).not.toContain('LINKED');
      expect(result.files).toEqual([]);
    },
  },
  {
    id: 'artifact-names',
    attack: 'ask the host to collect ../, absolute, NUL, backslash and empty paths; create oddly named files',
    safeOutcome:
      'every unsafe path is refused, and so is a name with a control character; odd but safe names come back intact',
    code: python`
      names = ['-rf', 'line\nbreak.txt', '..hidden', ' space ', 'ünïcødé.txt', 'x' * 255, 'back\\slash.txt']
      for name in names:
          with open(name, 'w') as handle:
              handle.write(name)
      print(len(names), 'files')
    `,
    async verify(result, context) {
      expectStatus(result, 'ok');
      const unsafe = [
        '../etc/passwd',
        '/etc/passwd',
        'sales.csv\0.txt',
        '',
        '.',
        '..',
        'sub/../../etc/passwd',
        '../../../../proc/self/environ',
        'back\\slash.txt',
        './sales.csv',
        'sub//notes.json',
      ];
      expect(await context.session.readFiles(unsafe)).toEqual([]);
      // A control character in a name would reach the host's disk as is: refused too (issue 10).
      expect(await context.session.readFiles(['line\nbreak.txt'])).toEqual([]);
      const odd = ['-rf', '..hidden', ' space ', 'ünïcødé.txt', 'x'.repeat(255)];
      const files = await context.session.readFiles(odd);
      expect(files.map((file) => file.path).sort()).toEqual([...odd].sort());
      for (const file of files) expect(Buffer.from(file.bytes).toString()).toBe(file.path);
    },
  },
  {
    id: 'hundred-thousand-files',
    attack: 'create 100 000 small files in the working directory',
    safeOutcome: 'the result arrives with a capped file list; the host reads at most maxFiles',
    timeoutMs: 120_000,
    code: python`
      import os
      os.makedirs('many', exist_ok=True)
      for index in range(100_000):
          with open(f'many/{index}.txt', 'w') as handle:
              handle.write('x')
      print('made', len(os.listdir('many')))
    `,
    async verify(result, context) {
      expectStatus(result, 'ok');
      expect(result.stdout.text).toContain('made 100000');
      expect(result.files.length).toBeLessThanOrEqual(20_000);
      const paths = Array.from({ length: 3_000 }, (_, index) => `many/${index}.txt`);
      const files = await context.session.readFiles(paths, { maxFiles: 500 });
      expect(files.length).toBeLessThanOrEqual(500);
      context.note(
        `${result.files.length} file changes reported, ${files.length} files read with maxFiles 500`,
      );
    },
  },
  {
    id: 'overwrite-workspace-inputs',
    attack: 'overwrite, chmod 000, truncate and delete every workspace input',
    safeOutcome: 'only the session copy changes: the host files keep their SHA-256',
    code: python`
      import os, shutil
      for root, dirs, files in os.walk('.'):
          for name in files:
              path = os.path.join(root, name)
              with open(path, 'w') as handle:
                  handle.write('overwritten')
              os.chmod(path, 0)
      shutil.rmtree('sub', ignore_errors=True)
      os.remove('sales.csv')
      print(sorted(os.listdir('.')))
    `,
    verify(result) {
      expectStatus(result, 'ok');
      expect(result.stdout.text).not.toContain('sales.csv');
    },
  },
  {
    id: 'remove-working-directory',
    attack: 'chdir to / and remove the whole working directory',
    safeOutcome: 'the host workspace is untouched; the session keeps running cells',
    code: python`
      import os, shutil
      os.chdir('/')
      shutil.rmtree('/home/analyst/work', ignore_errors=True)
      print(os.listdir('/home/analyst/work'))
    `,
    verify(result) {
      expectStatus(result, 'ok');
      expect(result.stdout.text).toContain('[]');
    },
  },
  {
    id: 'zip-bomb-xlsx',
    attack: 'an .xlsx of a few hundred KB that inflates to ~100 MB of sheet XML, opened with openpyxl',
    safeOutcome: 'the memory limit (or the timeout) stops it; the kernel restarts; the session continues',
    limits: { memoryMb: 768 },
    timeoutMs: 30_000,
    code: `${writeZipBombCode}\nimport openpyxl\nbook = openpyxl.load_workbook('bomb.xlsx')\nlen(book.active['A'])`,
    verify(result, context) {
      expectStatus(result, 'memory', 'timeout');
      context.note(oneLine(result.stdout.text, 60));
    },
    // Under runsc the address-space cap (prlimit --as, see the sandbox README) stops it first:
    // openpyxl's C parser dies on the failed allocation, which the supervisor sees as a crash.
    underGvisor: {
      safeOutcome:
        'the address-space cap stops it: a MemoryError in the cell, or the worker dies (`crashed`, `memory`, `timeout`) and restarts; the session continues',
      verify(result, context) {
        // Where the failed allocation lands decides which: Python raises, or the C parser dies.
        expectStatus(result, 'memory', 'timeout', 'crashed', 'error');
        if (result.status === 'error') expect(result.error?.name).toBe('MemoryError');
        // A worker that died restarted; at the timeout an interrupt that stopped the parse keeps the kernel (as under runc).
        else if (result.status !== 'timeout') expect(result.stateLost).toBe(true);
        context.note(oneLine(result.stdout.text, 60));
      },
    },
  },
  {
    id: 'zip-bomb-in-workspace-profile',
    attack: 'the zip-bomb .xlsx is a workspace input, profiled before any cell runs',
    safeOutcome:
      'the profile refuses the workbook from its zip directory (inflated size past the cap) without parsing it; the session continues',
    limits: { memoryMb: 768 },
    code: writeZipBombCode,
    async verify(result, context) {
      expectStatus(result, 'ok');
      const [bomb] = await context.session.readFiles(['bomb.xlsx']);
      expect(bomb).toBeDefined();
      const { mkdtemp, rm, writeFile } = await import('node:fs/promises');
      const { tmpdir } = await import('node:os');
      const { join } = await import('node:path');
      const workspace = await mkdtemp(join(tmpdir(), 'datalyst-bomb-'));
      try {
        await writeFile(join(workspace, 'bomb.xlsx'), bomb?.bytes ?? new Uint8Array());
        const session = await context.createSession({ workspaceDir: workspace, limits: { memoryMb: 768 } });
        const started = performance.now();
        const profile = await session.profileWorkspace();
        const file = profile.files.find((entry) => entry.path === 'bomb.xlsx');
        expect(file?.error).toMatch(/inflates to \d+ MiB/);
        expect(file?.tables).toEqual([]);
        context.note(
          `profile ended in ${Math.round(performance.now() - started)} ms: ${oneLine(file?.error ?? '', 120)}`,
        );
        const after = await session.execute('1 + 1');
        expect(after.value).toBe('2');
      } finally {
        await rm(workspace, { recursive: true, force: true });
      }
    },
  },
  {
    id: 'tmp-not-shared-between-sessions',
    attack: 'leave a secret in /tmp, /dev/shm and the working directory for the next session',
    safeOutcome: 'another session (started while this one runs) sees none of it',
    code: python`
      import secrets
      token = 'canary-' + secrets.token_hex(8)
      for path in ['/tmp/' + token, '/dev/shm/' + token, token + '.txt']:
          try:
              with open(path, 'w') as handle:
                  handle.write(token)
          except OSError as error:
              print('refused', path, error.strerror)
      print(token)
    `,
    async verify(result, context) {
      expectStatus(result, 'ok');
      const token = /canary-[0-9a-f]{16}/.exec(result.stdout.text)?.[0];
      expect(token).toBeDefined();
      // The next session starts while this one still runs: not even live sessions share scratch space.
      const next = await context.createSession();
      const search = await next.execute(python`
        import os
        hits = []
        for top in ['/tmp', '/dev/shm', '.']:
            for root, dirs, files in os.walk(top):
                for name in files + dirs:
                    path = os.path.join(root, name)
                    if '${token}' in name:
                        hits.append(path)
                    elif os.path.isfile(path) and not os.path.islink(path):
                        try:
                            if b'${token}' in open(path, 'rb').read(1 << 20):
                                hits.append(path)
                        except OSError:
                            pass
        print('hits', hits)
      `);
      expect(search.stdout.text).toContain('hits []');
    },
  },
  // --------------------------------------------------------- result size caps
  {
    id: 'figure-flood',
    attack: 'open 200 matplotlib figures in one cell',
    safeOutcome: 'the result carries at most the per-cell figure cap',
    code: python`
      import matplotlib.pyplot as plt
      for index in range(200):
          plt.figure()
          plt.plot([0, index])
    `,
    verify(result, context) {
      expectStatus(result, 'ok');
      expect(result.figures.length).toBeGreaterThan(0);
      expect(result.figures.length).toBeLessThanOrEqual(20);
      context.note(`${result.figures.length} figures kept`);
    },
  },
  {
    id: 'giant-repr',
    attack: 'echo a 50-million-character string as the last expression',
    safeOutcome: 'the echoed value is capped',
    code: "'x' * 50_000_000",
    verify(result, context) {
      expectStatus(result, 'ok');
      expect(result.value?.length ?? 0).toBeLessThanOrEqual(70_000);
      context.note(`value of ${result.value?.length} characters`);
    },
  },
  {
    id: 'huge-dataframe-display',
    attack: 'display a 100 000 × 300 DataFrame',
    safeOutcome: 'the table is capped to a head of rows and columns',
    code: 'import numpy as np, pandas as pd\npd.DataFrame(np.zeros((100_000, 300)))',
    verify(result, context) {
      expectStatus(result, 'ok');
      const [table] = result.tables;
      expect(table).toBeDefined();
      expect(table?.rows.length).toBeLessThanOrEqual(50);
      expect(table?.columns.length).toBeLessThanOrEqual(30);
      expect(table?.truncated).toBe(true);
      context.note(
        `table ${table?.rows.length}×${table?.columns.length} of ${table?.totalRows}×${table?.totalColumns}`,
      );
    },
  },
];
