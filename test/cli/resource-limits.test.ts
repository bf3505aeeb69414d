import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/index.ts';
import { checkSandboxLimits } from '../../src/cli/resource-limits.ts';

const engine = { cpus: 2, memoryBytes: 4 * 1024 ** 3 };

function refusal(limits: { cpus: number; memoryMb: number }, capacity = engine): ConfigError {
  try {
    checkSandboxLimits(limits, capacity);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('the limits were accepted');
}

describe('sandbox limits against the engine', () => {
  it('accepts what the engine can give', () => {
    expect(() => checkSandboxLimits({ cpus: 1.5, memoryMb: 2048 }, engine)).not.toThrow();
    expect(() => checkSandboxLimits({ cpus: 2, memoryMb: 256 }, engine)).not.toThrow();
  });

  it('refuses more CPUs than the engine has, with the option and the number to use', () => {
    const error = refusal({ cpus: 3, memoryMb: 2048 });
    expect(error.message).toBe('The sandbox asks for 3 CPUs; the Docker engine has 2.');
    expect(error.fix).toContain('--cpus 2');
    expect(error.fix).toContain('DATALYST_CPUS');
  });

  it('refuses more memory than the engine has, and less than the kernel needs', () => {
    expect(refusal({ cpus: 1, memoryMb: 8192 }).fix).toContain('--memory 2048m');
    const tooLittle = refusal({ cpus: 1, memoryMb: 64 });
    expect(tooLittle.message).toContain('below the 256 MB');
    expect(tooLittle.fix).toContain('--memory');
    // The minimum holds without an engine too (the local backend).
    expect(() => checkSandboxLimits({ cpus: 1, memoryMb: 64 }, null)).toThrow(ConfigError);
  });
});
