import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/index.ts';
import {
  parseConfigFile,
  readDatalystEnvironment,
  resolveAnalyzeSettings,
  type AnalyzeFlags,
} from '../../src/config/index.ts';

function runtimeOf(flags: AnalyzeFlags, env: NodeJS.ProcessEnv, file: string | null = null) {
  return resolveAnalyzeSettings({
    workspace: 'data',
    flags,
    env: readDatalystEnvironment(env),
    configFile:
      file === null ? null : { path: '/p/datalyst.config.json', config: parseConfigFile(file, 'x') },
    cwd: '/p',
    now: new Date(0),
  }).runtime;
}

describe('the runtime setting of datalyst analyze', () => {
  it('is runc by default; --runtime over the config file over DATALYST_RUNTIME', () => {
    expect(runtimeOf({}, {})).toBe('runc');
    expect(runtimeOf({}, { DATALYST_RUNTIME: 'runsc' })).toBe('runsc');
    expect(runtimeOf({}, { DATALYST_RUNTIME: 'runsc' }, '{"runtime": "runc"}')).toBe('runc');
    expect(runtimeOf({ runtime: 'RUNSC' }, { DATALYST_RUNTIME: 'runc' }, '{"runtime": "runc"}')).toBe(
      'runsc',
    );
  });

  it('refuses a runtime it does not know, naming where it came from', () => {
    expect(() => runtimeOf({ runtime: 'kata' }, {})).toThrow(/--runtime must be one of runc, runsc/);
    expect(() => runtimeOf({}, { DATALYST_RUNTIME: 'crun' })).toThrow(ConfigError);
    expect(() => runtimeOf({}, {}, '{"runtime": "kata"}')).toThrow(ConfigError);
  });
});
