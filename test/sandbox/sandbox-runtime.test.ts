import { describe, expect, it } from 'vitest';
import { ConfigError, SandboxUnavailableError } from '../../src/errors/index.ts';
import { mapDockerError } from '../../src/sandbox/docker-errors.ts';
import {
  containerCreateBody,
  defaultSandboxLimits,
  readSandboxEnvironment,
} from '../../src/sandbox/index.ts';

function hostConfigOf(body: Record<string, unknown>): Record<string, unknown> {
  return body['HostConfig'] as Record<string, unknown>;
}

describe('the runtime option', () => {
  it('is read from DATALYST_RUNTIME, runc or runsc, and refused otherwise', () => {
    expect(readSandboxEnvironment({}).runtime).toBeUndefined();
    expect(readSandboxEnvironment({ DATALYST_RUNTIME: ' runsc ' }).runtime).toBe('runsc');
    expect(readSandboxEnvironment({ DATALYST_RUNTIME: 'runc' }).runtime).toBe('runc');
    expect(() => readSandboxEnvironment({ DATALYST_RUNTIME: 'kata' })).toThrow(ConfigError);
  });

  it('names the runtime in HostConfig.Runtime, runc when none is asked for', () => {
    const base = { sessionId: 's', image: 'i', limits: defaultSandboxLimits, nowMs: 0 };
    expect(hostConfigOf(containerCreateBody(base))['Runtime']).toBe('runc');
    expect(hostConfigOf(containerCreateBody({ ...base, runtime: 'runsc' }))['Runtime']).toBe('runsc');
    // Everything else of the hardening is the same under either runtime, except
    // the process limit and the address-space limit that gVisor needs (container-config.ts).
    const { Runtime: _runc, Ulimits: runcUlimits, ...rest } = hostConfigOf(containerCreateBody(base));
    const runscBody = containerCreateBody({ ...base, runtime: 'runsc' });
    const { Runtime: _runsc, Ulimits: runscUlimits, ...restRunsc } = hostConfigOf(runscBody);
    expect(restRunsc).toEqual(rest);
    const nproc = (ulimits: unknown) =>
      (ulimits as { Name: string; Soft: number }[]).find((u) => u.Name === 'nproc');
    expect(nproc(runcUlimits)?.Soft).toBe(1024);
    expect(nproc(runscUlimits)?.Soft).toBe(defaultSandboxLimits.pidsLimit);
    expect(runscBody['Cmd']).toEqual([
      'prlimit',
      `--as=${Math.round(defaultSandboxLimits.memoryMb * 1024 * 1024 * 0.8)}`,
      '--',
      ...(containerCreateBody(base)['Cmd'] as string[]),
    ]);
  });

  it('maps an engine without the runtime to SandboxUnavailableError with the way to register it', () => {
    const engineAnswer = Object.assign(new Error('(HTTP code 400) bad parameter'), {
      statusCode: 400,
      json: { message: 'Unknown runtime specified runsc' },
    });
    const mapped = mapDockerError(engineAnswer, { action: 'create', image: 'i', runtime: 'runsc' });
    expect(mapped).toBeInstanceOf(SandboxUnavailableError);
    expect(mapped.message).toContain('no runtime named runsc');
    expect(mapped.fix).toContain('datalyst setup --gvisor');
  });
});
