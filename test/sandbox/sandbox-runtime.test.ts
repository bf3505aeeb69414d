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
    // Everything else of the hardening is the same under either runtime.
    const { Runtime: _runc, ...rest } = hostConfigOf(containerCreateBody(base));
    const { Runtime: _runsc, ...restRunsc } = hostConfigOf(
      containerCreateBody({ ...base, runtime: 'runsc' }),
    );
    expect(restRunsc).toEqual(rest);
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
