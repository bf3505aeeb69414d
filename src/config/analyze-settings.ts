import path from 'node:path';
import { ConfigError } from '../errors/index.ts';
import {
  modelProfileNames,
  defaultReportFormatNames,
  reportFormatNames,
  sandboxBackendNames,
  sandboxRuntimeNames,
  type LoadedConfigFile,
  type ModelProfileName,
  type ReportFormatName,
} from './config-file.ts';
import type { DatalystEnvironment } from './env.ts';
import { parseDurationMs, parsePositiveNumber, parseSizeMb } from './quantities.ts';

/** DeepAnalyze's own default instruction, used when none is given. */
export const DEFAULT_INSTRUCTION = 'Generate a data science report.';

/** Defaults of every analyze setting, in one place (the sandbox's own defaults match). */
export const analyzeDefaults = {
  maxRounds: 30,
  cellTimeoutMs: 120_000,
  memoryMb: 2048,
  cpus: 1.5,
  maxWorkspaceMb: 2048,
  runsDir: 'runs',
  sandbox: 'docker',
  runtime: 'runc',
  formats: defaultReportFormatNames,
} as const;

/**
 * The options of `datalyst analyze` as typed (strings, before any check).
 * Each one overrides the config file, which overrides the environment: the
 * file is a per-project choice, while OPENAI_* variables are often set
 * machine-wide for other tools.
 */
export interface AnalyzeFlags {
  model?: string | undefined;
  baseUrl?: string | undefined;
  apiKey?: string | undefined;
  profile?: string | undefined;
  offline?: boolean | undefined;
  out?: string | undefined;
  /** Each `--format` value; a value may itself be a comma list. */
  format?: readonly string[] | undefined;
  maxRounds?: string | undefined;
  cellTimeout?: string | undefined;
  deadline?: string | undefined;
  memory?: string | undefined;
  cpus?: string | undefined;
  sandbox?: string | undefined;
  runtime?: string | undefined;
  maxWorkspaceMb?: string | undefined;
}

export type ModelSettings =
  | {
      kind: 'offline';
      /** `requested`: --offline or `"offline": true`; `no-model-configured`: nothing named a model. */
      reason: 'requested' | 'no-model-configured';
      /** Something worth telling the person, e.g. that an API key is set but no model is named. */
      note: string | null;
    }
  | {
      kind: 'endpoint';
      id: string;
      /** Null: the openai package's default (api.openai.com). */
      baseUrl: string | null;
      apiKey: string | null;
      profile: ModelProfileName;
    };

/** Everything `datalyst analyze` needs, checked and with defaults applied. */
export interface AnalyzeSettings {
  workspaceDir: string;
  instruction: string;
  model: ModelSettings;
  /** The run folder. When not given, a new `runs/<time>-<workspace>` folder. */
  outDir: string;
  outDirIsDefault: boolean;
  formats: ReportFormatName[];
  maxRounds: number;
  cellTimeoutMs: number;
  /** Wall-clock limit of the whole run; null: none. */
  deadlineMs: number | null;
  memoryMb: number;
  cpus: number;
  sandbox: 'docker' | 'local';
  /** OCI runtime of a Docker session: `runc` or `runsc` (gVisor). */
  runtime: (typeof sandboxRuntimeNames)[number];
  /** An image to use instead of the built one (`DATALYST_IMAGE`). */
  image: string | null;
  maxWorkspaceBytes: number;
  /** The config file that was read, if any. */
  configPath: string | null;
}

export interface ResolveAnalyzeSettingsInput {
  workspace: string;
  instruction?: string | undefined;
  flags: AnalyzeFlags;
  env: DatalystEnvironment;
  configFile: LoadedConfigFile | null;
  cwd: string;
  /** The run's start time, for the default folder name. */
  now: Date;
}

function oneOf<T extends string>(value: string, allowed: readonly T[], option: string): T {
  const found = allowed.find((candidate) => candidate === value.trim().toLowerCase());
  if (found === undefined) {
    throw new ConfigError(
      `${option} must be one of ${allowed.join(', ')}; got "${value}".`,
      `Pass ${option} ${allowed[0]}.`,
    );
  }
  return found;
}

/** Reads `--format html --format md,ipynb` into a list without repeats, in the canonical order. */
export function parseFormats(values: readonly string[]): ReportFormatName[] {
  const wanted = new Set<ReportFormatName>();
  for (const value of values.flatMap((item) => item.split(','))) {
    if (value.trim() === '') continue;
    const name = value.trim().toLowerCase() === 'markdown' ? 'md' : value;
    wanted.add(oneOf(name, reportFormatNames, '--format'));
  }
  if (wanted.size === 0) {
    throw new ConfigError(
      '--format needs at least one format.',
      `Pass for example --format html,md (formats: ${reportFormatNames.join(', ')}).`,
    );
  }
  return reportFormatNames.filter((name) => wanted.has(name));
}

function checkBaseUrl(value: string, source: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch (error) {
    throw new ConfigError(
      `${source} is not a URL: "${value}".`,
      'Pass the endpoint with its scheme, e.g. http://localhost:8000/v1.',
      error,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(
      `${source} must be an http or https URL; got "${value}".`,
      'Pass the endpoint with its scheme, e.g. http://localhost:8000/v1.',
    );
  }
  return value.replace(/\/+$/, '');
}

/** DeepAnalyze-8B gets its own protocol profile; every other model is a chat model. */
export function inferProfile(modelId: string): ModelProfileName {
  return /deepanalyze/i.test(modelId) ? 'deepanalyze' : 'chat';
}

/** Which model a run would use: flags, then the config file, then the environment; none named → offline. */
export function resolveModelSettings(
  input: Pick<ResolveAnalyzeSettingsInput, 'flags' | 'env' | 'configFile'>,
): ModelSettings {
  const { flags, env } = input;
  const file = input.configFile?.config;
  if (flags.offline === true) {
    if (flags.model !== undefined || flags.baseUrl !== undefined) {
      throw new ConfigError(
        '--offline cannot be combined with --model or --base-url.',
        'Drop --offline to use the model, or drop the model options to run offline.',
      );
    }
    return { kind: 'offline', reason: 'requested', note: null };
  }
  if (file?.offline === true && flags.model === undefined)
    return { kind: 'offline', reason: 'requested', note: null };
  const id = flags.model ?? file?.model?.id ?? env.model;
  if (id === undefined) {
    if (flags.baseUrl !== undefined || flags.apiKey !== undefined) {
      throw new ConfigError(
        '--base-url and --api-key need a model name.',
        'Add --model <name> (or set DATALYST_MODEL).',
      );
    }
    const configured = [
      env.apiKey !== undefined && 'an API key',
      env.baseUrl !== undefined && 'a base URL',
    ].filter(Boolean);
    return {
      kind: 'offline',
      reason: 'no-model-configured',
      note:
        configured.length > 0
          ? `The environment sets ${configured.join(' and ')} but names no model; pass --model or set DATALYST_MODEL to use it.`
          : null,
    };
  }
  const baseUrlSource =
    flags.baseUrl !== undefined
      ? ['--base-url', flags.baseUrl]
      : file?.model?.baseUrl !== undefined
        ? ['model.baseUrl', file.model.baseUrl]
        : env.baseUrl !== undefined
          ? ['OPENAI_BASE_URL', env.baseUrl]
          : null;
  const profileText = flags.profile ?? file?.model?.profile ?? env.profile;
  return {
    kind: 'endpoint',
    id,
    baseUrl: baseUrlSource === null ? null : checkBaseUrl(baseUrlSource[1] ?? '', baseUrlSource[0] ?? ''),
    apiKey: flags.apiKey ?? env.apiKey ?? null,
    profile:
      profileText === undefined ? inferProfile(id) : oneOf(profileText, modelProfileNames, '--profile'),
  };
}

/** A folder name that is safe on every file system: letters, digits, dot, dash, underscore. */
function safeFolderName(name: string): string {
  const cleaned = name
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .replace(/[^\w.-]+/g, '-')
    .replace(/^[-.]+|-+$/g, '');
  return cleaned.slice(0, 60) || 'workspace';
}

/** `runs/20250314-093015-sales`: sorts by time, names the workspace, local time as the person sees it. */
export function defaultRunDir(runsDir: string, workspaceDir: string, now: Date): string {
  const pad = (value: number) => String(value).padStart(2, '0');
  const stamp = `${now.getFullYear()}${pad(now.getMonth() + 1)}${pad(now.getDate())}-${pad(now.getHours())}${pad(now.getMinutes())}${pad(now.getSeconds())}`;
  return path.join(runsDir, `${stamp}-${safeFolderName(path.basename(path.resolve(workspaceDir)))}`);
}

/** Applies flags over the config file over the environment over the defaults, checking every value. */
export function resolveAnalyzeSettings(input: ResolveAnalyzeSettingsInput): AnalyzeSettings {
  const { flags, env, cwd } = input;
  const loaded = input.configFile;
  const file = loaded?.config;
  const workspaceDir = path.resolve(cwd, input.workspace);
  const instruction = input.instruction?.trim() ? input.instruction.trim() : DEFAULT_INSTRUCTION;

  const runsDir =
    file?.runsDir !== undefined && loaded
      ? path.resolve(path.dirname(loaded.path), file.runsDir)
      : path.resolve(cwd, analyzeDefaults.runsDir);
  const outDir =
    flags.out !== undefined ? path.resolve(cwd, flags.out) : defaultRunDir(runsDir, workspaceDir, input.now);

  const sandboxText = flags.sandbox ?? file?.sandbox ?? env.sandbox ?? analyzeDefaults.sandbox;
  return {
    workspaceDir,
    instruction,
    model: resolveModelSettings(input),
    outDir,
    outDirIsDefault: flags.out === undefined,
    formats:
      flags.format !== undefined && flags.format.length > 0
        ? parseFormats(flags.format)
        : [...(file?.formats ?? analyzeDefaults.formats)],
    maxRounds:
      flags.maxRounds !== undefined
        ? parsePositiveNumber(flags.maxRounds, '--max-rounds', true)
        : (file?.maxRounds ?? analyzeDefaults.maxRounds),
    cellTimeoutMs:
      flags.cellTimeout !== undefined
        ? parseDurationMs(flags.cellTimeout, '--cell-timeout')
        : file?.cellTimeoutSeconds !== undefined
          ? Math.round(file.cellTimeoutSeconds * 1000)
          : env.cellTimeoutMs !== undefined
            ? parsePositiveNumber(env.cellTimeoutMs, 'DATALYST_CELL_TIMEOUT_MS', true)
            : analyzeDefaults.cellTimeoutMs,
    deadlineMs:
      flags.deadline !== undefined
        ? parseDurationMs(flags.deadline, '--deadline', 'm')
        : file?.deadlineMinutes !== undefined
          ? Math.round(file.deadlineMinutes * 60_000)
          : null,
    memoryMb:
      flags.memory !== undefined
        ? parseSizeMb(flags.memory, '--memory')
        : (file?.memoryMb ??
          (env.memoryMb !== undefined
            ? parsePositiveNumber(env.memoryMb, 'DATALYST_MEMORY_MB', true)
            : analyzeDefaults.memoryMb)),
    cpus:
      flags.cpus !== undefined
        ? parsePositiveNumber(flags.cpus, '--cpus')
        : (file?.cpus ??
          (env.cpus !== undefined ? parsePositiveNumber(env.cpus, 'DATALYST_CPUS') : analyzeDefaults.cpus)),
    sandbox: oneOf(sandboxText, sandboxBackendNames, '--sandbox'),
    runtime:
      flags.runtime !== undefined
        ? oneOf(flags.runtime, sandboxRuntimeNames, '--runtime')
        : (file?.runtime ??
          (env.runtime !== undefined
            ? oneOf(env.runtime, sandboxRuntimeNames, 'DATALYST_RUNTIME')
            : analyzeDefaults.runtime)),
    image: env.image ?? null,
    maxWorkspaceBytes: Math.round(
      (flags.maxWorkspaceMb !== undefined
        ? parsePositiveNumber(flags.maxWorkspaceMb, '--max-workspace-mb')
        : (file?.maxWorkspaceMb ?? analyzeDefaults.maxWorkspaceMb)) *
        1024 *
        1024,
    ),
    configPath: loaded?.path ?? null,
  };
}
