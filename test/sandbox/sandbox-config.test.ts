import type Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import { ConfigError, SandboxFailureError, SandboxUnavailableError } from '../../src/errors/index.ts';
import { mapDockerError } from '../../src/sandbox/docker-errors.ts';
import {
  containerCreateBody,
  containerLabels,
  createDockerBackend,
  defaultSandboxLimits,
  isSafeWorkspacePath,
  readSandboxEnvironment,
  resolveSandboxLimits,
} from '../../src/sandbox/index.ts';

describe('sandbox limits', () => {
  it('take defaults, then the environment, then the caller', () => {
    const environment = readSandboxEnvironment({
      DATALYST_CELL_TIMEOUT_MS: '5000',
      DATALYST_MEMORY_MB: ' 1024 ',
    });
    expect(environment.limits).toEqual({ cellTimeoutMs: 5000, memoryMb: 1024 });
    const limits = resolveSandboxLimits({ memoryMb: 512 }, environment);
    expect(limits).toEqual({ ...defaultSandboxLimits, cellTimeoutMs: 5000, memoryMb: 512 });
  });

  it('refuse malformed values with a ConfigError naming them', () => {
    expect(() => readSandboxEnvironment({ DATALYST_CPUS: 'many' })).toThrow(ConfigError);
    expect(() => readSandboxEnvironment({ DATALYST_SANDBOX: 'vm' })).toThrow(/DATALYST_SANDBOX/);
    expect(() => resolveSandboxLimits({ cpus: 0 }, readSandboxEnvironment({}))).toThrow(ConfigError);
  });

  it('say what a valid value is when a variable is not one (1.5 is positive, but not a whole number of MiB)', () => {
    expect(() => readSandboxEnvironment({ DATALYST_MEMORY_MB: '1.5' })).toThrow(
      'DATALYST_MEMORY_MB=1.5 is not a whole number of MiB above 0.',
    );
    expect(() => readSandboxEnvironment({ DATALYST_CPUS: '-1' })).toThrow('is not a number of CPUs above 0');
  });
});

describe('docker errors', () => {
  it('map a connection reset, a timeout and a broken pipe to an unreachable engine', () => {
    for (const code of ['ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ECONNREFUSED']) {
      const error = Object.assign(new Error(`socket ${code}`), { code });
      const mapped = mapDockerError(error, { action: 'start the session container' });
      expect(mapped).toBeInstanceOf(SandboxUnavailableError);
      expect(mapped.message).toContain(code);
    }
    const other = mapDockerError(Object.assign(new Error('bad'), { statusCode: 500 }), { action: 'x' });
    expect(other).toBeInstanceOf(SandboxFailureError);
  });
});

describe('the container configuration', () => {
  const body = containerCreateBody({
    sessionId: 'abc',
    image: 'datalyst/python-runner:test',
    limits: { ...defaultSandboxLimits, memoryMb: 1024, cpus: 1.5, pidsLimit: 100 },
    nowMs: 1_000,
    ownerPid: 42,
    ownerHost: 'host-1',
    ownerStartedMs: 500,
  });
  const host = body['HostConfig'] as Record<string, unknown>;

  it('has every hardening option of the design', () => {
    expect(body['User']).toBe('1000:1000');
    expect(body['NetworkDisabled']).toBe(true);
    expect(host).toMatchObject({
      NetworkMode: 'none',
      CapDrop: ['ALL'],
      ReadonlyRootfs: true,
      Memory: 1024 * 1024 * 1024,
      MemorySwap: 1024 * 1024 * 1024,
      NanoCpus: 1_500_000_000,
      PidsLimit: 100,
      // The supervisor is PID 1: docker-init ran as the cell's uid and was dumpable.
      Init: false,
      LogConfig: { Type: 'none', Config: {} },
    });
    const securityOptions = host['SecurityOpt'] as string[];
    expect(securityOptions[0]).toBe('no-new-privileges');
    expect(securityOptions[1]).toMatch(/^seccomp=\{"defaultAction":"SCMP_ACT_ERRNO"/);
    expect(host['Tmpfs']).toEqual({
      '/home/analyst/work': 'rw,nosuid,nodev,size=1024m,nr_inodes=262144,uid=1000,gid=1000,mode=0755',
      '/tmp': 'rw,noexec,nosuid,nodev,size=256m,nr_inodes=65536,mode=1777',
    });
    const ulimits = host['Ulimits'] as { Name: string; Soft: number; Hard: number }[];
    expect(ulimits.map((limit) => limit.Name).sort()).toEqual(['core', 'fsize', 'nofile', 'nproc']);
    expect(ulimits.find((limit) => limit.Name === 'core')).toEqual({ Name: 'core', Soft: 0, Hard: 0 });
    expect(JSON.stringify(body)).not.toContain('docker.sock');
    expect(host['Binds']).toBeUndefined();
  });

  it('keeps stdin open for the protocol and closes it when the host goes away', () => {
    expect(body).toMatchObject({ OpenStdin: true, StdinOnce: true, AttachStdin: true, Tty: false });
    expect(body['StopSignal']).toBe('SIGKILL');
    expect(host['AutoRemove']).toBe(true);
  });

  it('labels the container for a reaper', () => {
    expect(body['Labels']).toEqual({
      [containerLabels.session]: 'abc',
      [containerLabels.ownerPid]: '42',
      [containerLabels.ownerHost]: 'host-1',
      [containerLabels.ownerStarted]: '500',
      [containerLabels.deadline]: String(1_000 + defaultSandboxLimits.sessionTimeoutMs),
    });
  });
});

describe('workspace paths', () => {
  it('accept relative paths inside the working directory only', () => {
    for (const path of ['a.csv', 'sub/a.csv', 'a b/c d.csv', '.hidden'])
      expect(isSafeWorkspacePath(path)).toBe(true);
    for (const path of ['', '/etc/passwd', '../a', 'a/../b', 'a//b', './a', 'a/', 'a\\b', 'a\0b']) {
      expect(isSafeWorkspacePath(path)).toBe(false);
    }
  });
});

describe('the docker backend', () => {
  it('refuses to start, and removes the container, when the engine warns that a limit was dropped', async () => {
    const removed: string[] = [];
    // A stand-in for dockerode with the two calls the backend makes before the warning check.
    const fakeDocker = {
      modem: {
        dial(options: { path: string }, callback: (error: Error | null, result: unknown) => void) {
          if (options.path === '/_ping') callback(null, 'OK');
          else
            callback(null, {
              Id: 'c0ffee',
              Warnings: ['Your kernel does not support swap limit capabilities.'],
            });
        },
      },
      getContainer: (id: string) => ({
        remove: async () => {
          removed.push(id);
        },
      }),
    } as unknown as Docker;
    const backend = createDockerBackend({ docker: fakeDocker });
    const error = await backend
      .start({ sessionId: 's', image: 'i', limits: defaultSandboxLimits })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SandboxUnavailableError);
    expect((error as Error).message).toContain('swap limit');
    expect(removed).toEqual(['c0ffee']);
  });
});
