import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, DatalystError } from '../../src/index.ts';
import {
  DEFAULT_INSTRUCTION,
  defaultRunDir,
  inferProfile,
  loadConfigFile,
  parseConfigFile,
  parseDurationMs,
  parseFormats,
  parseSizeMb,
  readDatalystEnvironment,
  resolveAnalyzeSettings,
  type AnalyzeFlags,
  type LoadedConfigFile,
} from '../../src/config/index.ts';
import { removeTemporaryDirs, temporaryDir } from './support/cli-harness.ts';

afterEach(removeTemporaryDirs);

function errorOf(work: () => unknown): DatalystError {
  try {
    work();
  } catch (error) {
    if (DatalystError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a DatalystError');
}

const now = new Date(2025, 2, 14, 9, 30, 15);

function resolve(
  flags: AnalyzeFlags = {},
  env: NodeJS.ProcessEnv = {},
  configFile: LoadedConfigFile | null = null,
) {
  return resolveAnalyzeSettings({
    workspace: 'data',
    flags,
    env: readDatalystEnvironment(env),
    configFile,
    cwd: '/home/ana/project',
    now,
  });
}

describe('quantities', () => {
  it('reads durations with units, and bare numbers in the option unit', () => {
    expect(parseDurationMs('90s', '--cell-timeout')).toBe(90_000);
    expect(parseDurationMs('90', '--cell-timeout')).toBe(90_000);
    expect(parseDurationMs('1500ms', '--cell-timeout')).toBe(1500);
    expect(parseDurationMs('1h30m', '--deadline', 'm')).toBe(5_400_000);
    expect(parseDurationMs('45', '--deadline', 'm')).toBe(2_700_000);
    expect(parseDurationMs('2.5m', '--deadline', 'm')).toBe(150_000);
  });

  it('refuses durations that are not positive or have unknown units', () => {
    for (const text of ['0', '-5s', '5 parsecs', '', 'm', '1d']) {
      const error = errorOf(() => parseDurationMs(text, '--cell-timeout'));
      expect(error.code).toBe('CONFIG_INVALID');
      expect(error.message).toContain('--cell-timeout');
    }
  });

  it('reads sizes in MiB, 1024-based', () => {
    expect(parseSizeMb('2g', '--memory')).toBe(2048);
    expect(parseSizeMb('512m', '--memory')).toBe(512);
    expect(parseSizeMb('1.5GiB', '--memory')).toBe(1536);
    expect(parseSizeMb('768', '--memory')).toBe(768);
    expect(errorOf(() => parseSizeMb('lots', '--memory')).fix).toContain('2g');
  });
});

describe('formats', () => {
  it('takes repeated and comma-separated values, in canonical order, without repeats', () => {
    expect(parseFormats(['md,html', 'json', 'html'])).toEqual(['html', 'md', 'json']);
    expect(parseFormats(['markdown'])).toEqual(['md']);
  });

  it('refuses an unknown format by name', () => {
    const error = errorOf(() => parseFormats(['html,docx']));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toContain('"docx"');
  });
});

describe('config file', () => {
  it('accepts every documented key', () => {
    const config = parseConfigFile(
      JSON.stringify({
        model: { id: 'DeepAnalyze-8B', baseUrl: 'http://localhost:8000/v1', profile: 'deepanalyze' },
        sandbox: 'docker',
        formats: ['html', 'ipynb'],
        maxRounds: 12,
        cellTimeoutSeconds: 60,
        deadlineMinutes: 20,
        memoryMb: 4096,
        cpus: 2,
        maxWorkspaceMb: 500,
        runsDir: 'reports',
      }),
      'datalyst.config.json',
    );
    expect(config.model?.id).toBe('DeepAnalyze-8B');
  });

  it('names an unknown key, even a nested one, instead of ignoring it', () => {
    const error = errorOf(() =>
      parseConfigFile('{"maxRound": 3, "model": {"id": "m", "temprature": 0.2}}', 'cfg.json'),
    );
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toContain('unknown key "maxRound"');
    expect(error.message).toContain('unknown key "temprature" in model');
    expect(error.fix).toContain('maxRounds');
  });

  it('suggests the key that was meant ("did you mean")', () => {
    const error = errorOf(() =>
      parseConfigFile(
        '{"maxRound": 3, "cellTimeout": 9, "colour": true, "model": {"id": "m", "baseURL": "http://x/v1"}}',
        'cfg.json',
      ),
    );
    expect(error.message).toContain('unknown key "maxRound" in (top level) (did you mean "maxRounds"?)');
    expect(error.message).toContain('unknown key "baseURL" in model (did you mean "baseUrl"?)');
    // Too far from every key to guess.
    expect(error.message).toMatch(/unknown key "colour" in \(top level\)(;|\.)/);
    expect(error.message).not.toContain('"cellTimeout" in (top level) (did you mean');
  });

  it('refuses API keys in the file and says where a key goes', () => {
    const error = errorOf(() =>
      parseConfigFile('{"model": {"id": "gpt-4o-mini", "apiKey": "sk-secret"}}', 'cfg.json'),
    );
    expect(error.fix).toContain('OPENAI_API_KEY');
    expect(error.message).not.toContain('sk-secret');
  });

  it('reports JSON syntax errors and wrong types with the path', () => {
    expect(errorOf(() => parseConfigFile('{"maxRounds": 3,}', 'cfg.json')).message).toContain(
      'not valid JSON',
    );
    expect(errorOf(() => parseConfigFile('{"maxRounds": "many"}', 'cfg.json')).message).toContain(
      'maxRounds',
    );
    expect(
      errorOf(() => parseConfigFile('{"model": {"id": "m", "baseUrl": "ftp://x"}}', 'cfg.json')).message,
    ).toContain('model.baseUrl');
  });

  it('is read from the current folder when present, and must exist when named', async () => {
    const dir = await temporaryDir();
    expect(await loadConfigFile(undefined, dir)).toBeNull();
    await writeFile(path.join(dir, 'datalyst.config.json'), '{"maxRounds": 7}');
    expect((await loadConfigFile(undefined, dir))?.config.maxRounds).toBe(7);
    await expect(loadConfigFile('missing.json', dir)).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
  });

  it('is found upward from the working directory, the nearest one winning', async () => {
    const project = await temporaryDir();
    const deep = path.join(project, 'analysis', 'q1', 'data');
    await mkdir(deep, { recursive: true });
    await writeFile(path.join(project, 'datalyst.config.json'), '{"maxRounds": 7}');
    expect(await loadConfigFile(undefined, deep)).toEqual({
      path: path.join(project, 'datalyst.config.json'),
      config: { maxRounds: 7 },
    });
    await writeFile(
      path.join(project, 'analysis', 'datalyst.config.json'),
      '{"maxRounds": 9, "maxRound": 1}',
    );
    await expect(loadConfigFile(undefined, deep)).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringContaining(path.join(project, 'analysis', 'datalyst.config.json')) as string,
    });
    await writeFile(path.join(project, 'analysis', 'datalyst.config.json'), '');
    await expect(loadConfigFile(undefined, deep)).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
  });
});

describe('analyze settings', () => {
  it('uses the defaults: offline analyst, all formats, a new run folder, DeepAnalyze default instruction', () => {
    const settings = resolve();
    expect(settings.model).toEqual({ kind: 'offline', reason: 'no-model-configured', note: null });
    expect(settings.formats).toEqual(['html', 'md', 'ipynb', 'json']);
    expect(settings.instruction).toBe(DEFAULT_INSTRUCTION);
    expect(settings.workspaceDir).toBe('/home/ana/project/data');
    expect(settings.outDir).toBe('/home/ana/project/runs/20250314-093015-data');
    expect(settings.outDirIsDefault).toBe(true);
    expect(settings).toMatchObject({
      maxRounds: 30,
      cellTimeoutMs: 120_000,
      memoryMb: 2048,
      cpus: 1.5,
      deadlineMs: null,
      sandbox: 'docker',
    });
    expect(settings.maxWorkspaceBytes).toBe(2048 * 1024 * 1024);
  });

  it('says so when a key or base URL is set but no model is named', () => {
    const settings = resolve({}, { OPENAI_API_KEY: 'sk-x' });
    expect(settings.model.kind).toBe('offline');
    expect(settings.model.kind === 'offline' && settings.model.note).toContain('DATALYST_MODEL');
  });

  it('takes the model from the environment, with the OpenAI variables', () => {
    const settings = resolve(
      {},
      { DATALYST_MODEL: 'gpt-4o-mini', OPENAI_API_KEY: 'sk-x', OPENAI_BASE_URL: 'https://example.org/v1/' },
    );
    expect(settings.model).toEqual({
      kind: 'endpoint',
      id: 'gpt-4o-mini',
      baseUrl: 'https://example.org/v1',
      apiKey: 'sk-x',
      profile: 'chat',
    });
  });

  it('prefers DATALYST_ variables over OPENAI_ ones', () => {
    const settings = resolve(
      {},
      { DATALYST_MODEL: 'm', OPENAI_BASE_URL: 'http://a/v1', DATALYST_BASE_URL: 'http://b/v1' },
    );
    expect(settings.model.kind === 'endpoint' && settings.model.baseUrl).toBe('http://b/v1');
  });

  it('infers the DeepAnalyze profile from the model name, and lets --profile override it', () => {
    expect(inferProfile('RUC-DataLab/DeepAnalyze-8B')).toBe('deepanalyze');
    expect(inferProfile('qwen2.5:7b')).toBe('chat');
    const settings = resolve({ model: 'DeepAnalyze-8B', profile: 'chat' });
    expect(settings.model.kind === 'endpoint' && settings.model.profile).toBe('chat');
    expect(errorOf(() => resolve({ model: 'm', profile: 'smart' })).message).toContain('--profile');
  });

  it('applies flags over the config file over the environment', () => {
    const configFile: LoadedConfigFile = {
      path: '/home/ana/project/conf/datalyst.config.json',
      config: {
        model: { id: 'from-file' },
        maxRounds: 10,
        memoryMb: 4096,
        runsDir: '../reports',
        formats: ['html'],
      },
    };
    const env = { DATALYST_MODEL: 'from-env', DATALYST_MEMORY_MB: '1024', DATALYST_CPUS: '1' };
    const fromFile = resolve({}, env, configFile);
    expect(fromFile.model.kind === 'endpoint' && fromFile.model.id).toBe('from-file');
    expect(fromFile).toMatchObject({ maxRounds: 10, memoryMb: 4096, cpus: 1, formats: ['html'] });
    // runsDir is relative to the config file's folder.
    expect(fromFile.outDir).toBe('/home/ana/project/reports/20250314-093015-data');
    const fromFlags = resolve(
      { model: 'from-flag', maxRounds: '5', memory: '3g', out: 'out/x', format: ['md'] },
      env,
      configFile,
    );
    expect(fromFlags.model.kind === 'endpoint' && fromFlags.model.id).toBe('from-flag');
    expect(fromFlags).toMatchObject({
      maxRounds: 5,
      memoryMb: 3072,
      outDir: '/home/ana/project/out/x',
      outDirIsDefault: false,
      formats: ['md'],
    });
  });

  it('runs offline when asked, and refuses --offline with model options', () => {
    expect(resolve({ offline: true }, { DATALYST_MODEL: 'm' }).model).toMatchObject({
      kind: 'offline',
      reason: 'requested',
    });
    expect(errorOf(() => resolve({ offline: true, model: 'm' })).message).toContain('--offline');
    expect(errorOf(() => resolve({ baseUrl: 'http://localhost:8000/v1' })).fix).toContain('--model');
  });

  it('checks every value and names the option', () => {
    expect(errorOf(() => resolve({ maxRounds: '2.5' })).message).toContain('--max-rounds');
    expect(errorOf(() => resolve({ sandbox: 'vm' })).message).toContain('--sandbox');
    expect(errorOf(() => resolve({ model: 'm', baseUrl: 'localhost:8000' })).message).toContain('--base-url');
    expect(errorOf(() => resolve({}, { DATALYST_CELL_TIMEOUT_MS: 'soon' })).message).toContain(
      'DATALYST_CELL_TIMEOUT_MS',
    );
  });

  it('names default run folders safely and by time', () => {
    expect(defaultRunDir('/r', '/data/Ventes été 2024/', now)).toBe('/r/20250314-093015-Ventes-ete-2024');
    expect(defaultRunDir('/r', '/', now)).toBe('/r/20250314-093015-workspace');
  });
});

describe('environment', () => {
  it('reads each variable once into one object; empty counts as unset', () => {
    const env = readDatalystEnvironment({
      NO_COLOR: '1',
      FORCE_COLOR: '0',
      DATALYST_MODEL: '  ',
      TERM: 'dumb',
      DOCKER_HOST: 'tcp://h:2375',
    });
    expect(env).toMatchObject({
      noColor: true,
      forceColor: false,
      model: undefined,
      dumbTerminal: true,
      dockerHost: 'tcp://h:2375',
    });
  });
});

// A config file next to the data is a common layout; it must be found from the cwd.
it('loads a config file named on the command line relative to the current folder', async () => {
  const dir = await temporaryDir();
  await mkdir(path.join(dir, 'conf'));
  await writeFile(path.join(dir, 'conf', 'team.json'), '{"cpus": 3}');
  expect((await loadConfigFile('conf/team.json', dir))?.config.cpus).toBe(3);
});
