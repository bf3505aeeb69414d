import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { closest, distance } from 'fastest-levenshtein';
import { lilconfig } from 'lilconfig';
import { z } from 'zod';
import { ConfigError } from '../errors/index.ts';

/**
 * `datalyst.config.json`: settings a project keeps next to its data. Checked
 * with strict schemas, so a misspelt key is an error that names it instead of
 * a setting that silently does nothing. API keys are deliberately not
 * accepted: a config file gets committed, a key must not.
 */

export const CONFIG_FILE_NAME = 'datalyst.config.json';

export const reportFormatNames = ['html', 'md', 'ipynb', 'json', 'pdf'] as const;
export type ReportFormatName = (typeof reportFormatNames)[number];
/** Written when no format is named: all but `pdf`, which needs Chromium. */
export const defaultReportFormatNames: readonly ReportFormatName[] = ['html', 'md', 'ipynb', 'json'];

export const modelProfileNames = ['deepanalyze', 'chat'] as const;
export type ModelProfileName = (typeof modelProfileNames)[number];

export const sandboxBackendNames = ['docker', 'local'] as const;
/** The sandbox's OCI runtimes (src/sandbox `sandboxRuntimeNames`; kept here so config loads without Docker's client). */
export const sandboxRuntimeNames = ['runc', 'runsc'] as const;

const modelSectionSchema = z.strictObject({
  /** The model name sent to the endpoint. */
  id: z.string().min(1),
  /** An OpenAI-compatible base URL, e.g. http://localhost:8000/v1 for vLLM. */
  baseUrl: z.url({ protocol: /^https?$/ }).optional(),
  profile: z.enum(modelProfileNames).optional(),
});

export const configFileSchema = z.strictObject({
  /** Lets editors offer completion; ignored by Datalyst. */
  $schema: z.string().optional(),
  model: modelSectionSchema.optional(),
  offline: z.boolean().optional(),
  sandbox: z.enum(sandboxBackendNames).optional(),
  /** OCI runtime of Docker sessions: `runc` (default) or `runsc` (gVisor). */
  runtime: z.enum(sandboxRuntimeNames).optional(),
  formats: z.array(z.enum(reportFormatNames)).min(1).optional(),
  maxRounds: z.int().positive().optional(),
  cellTimeoutSeconds: z.number().positive().optional(),
  deadlineMinutes: z.number().positive().optional(),
  memoryMb: z.number().positive().optional(),
  cpus: z.number().positive().optional(),
  maxWorkspaceMb: z.number().positive().optional(),
  /** Where the per-run folders go; relative paths are taken from the config file's folder. Default `runs`. */
  runsDir: z.string().min(1).optional(),
});
export type ConfigFile = z.infer<typeof configFileSchema>;

/** A config file that was read, with the path it came from (for messages and relative paths). */
export interface LoadedConfigFile {
  path: string;
  config: ConfigFile;
}

const secretKeys = new Set(['apiKey', 'api_key', 'key', 'token', 'OPENAI_API_KEY']);

/** The allowed key nearest to a misspelt one, when it is near enough to be what was meant. */
function suggestKey(key: string, allowed: readonly string[]): string | null {
  if (allowed.length === 0) return null;
  const nearest = closest(key, [...allowed]);
  return distance(key.toLowerCase(), nearest.toLowerCase()) <= Math.max(2, Math.floor(key.length / 3))
    ? nearest
    : null;
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const where = issue.path.length > 0 ? issue.path.map(String).join('.') : '(top level)';
  if (issue.code === 'unrecognized_keys') {
    const allowed = Object.keys(
      issue.path[0] === 'model' ? modelSectionSchema.shape : configFileSchema.shape,
    );
    return issue.keys
      .map((key) => {
        const suggestion = secretKeys.has(key) ? null : suggestKey(key, allowed);
        return `unknown key "${key}" in ${where}${suggestion === null ? '' : ` (did you mean "${suggestion}"?)`}`;
      })
      .join('; ');
  }
  return `${where}: ${issue.message}`;
}

function fixFor(issues: readonly z.core.$ZodIssue[]): string {
  const secret = issues.some(
    (issue) => issue.code === 'unrecognized_keys' && issue.keys.some((key) => secretKeys.has(key)),
  );
  if (secret) return 'Keep API keys out of config files: set OPENAI_API_KEY or pass --api-key.';
  return `Allowed keys: ${Object.keys(configFileSchema.shape).join(', ')}; model takes ${Object.keys(modelSectionSchema.shape).join(', ')}. See \`datalyst analyze --help\`.`;
}

/** Parses the text of a config file; `source` names it in messages. */
export function parseConfigFile(text: string, source: string): ConfigFile {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(
      `${source} is not valid JSON: ${error instanceof Error ? error.message : String(error)}.`,
      'Fix the JSON syntax (no comments or trailing commas).',
      error,
    );
  }
  const parsed = configFileSchema.safeParse(json);
  if (!parsed.success) {
    throw new ConfigError(
      `${source} is not a valid Datalyst config: ${parsed.error.issues.map(describeIssue).join('; ')}.`,
      fixFor(parsed.error.issues),
      parsed.error,
    );
  }
  return parsed.data;
}

// Found as eslint, prettier and the like find theirs: in the working
// directory, else in the nearest folder above it that has one (up to the home
// folder, or the root outside it). lilconfig does the walk; the file is
// parsed by parseConfigFile, so its errors are Datalyst's.
const configSearch = lilconfig('datalyst', {
  searchPlaces: [CONFIG_FILE_NAME],
  loaders: { '.json': (filepath, content) => parseConfigFile(content, filepath) },
  // An empty datalyst.config.json is a mistake to report, not a file to walk past.
  ignoreEmptySearchPlaces: false,
  cache: false,
});

/**
 * Finds and reads the config file: the explicit path (`--config`, then
 * `DATALYST_CONFIG`), which must exist, else the nearest
 * `datalyst.config.json` in `cwd` or a folder above it, else none.
 */
export async function loadConfigFile(
  explicitPath: string | undefined,
  cwd: string,
): Promise<LoadedConfigFile | null> {
  if (explicitPath === undefined) {
    const found = await configSearch.search(cwd);
    if (found === null) return null;
    // lilconfig skips the loader for an empty file; the loader's result is parseConfigFile's (typed any by lilconfig).
    if (found.isEmpty === true) return { path: found.filepath, config: parseConfigFile('', found.filepath) };
    return { path: found.filepath, config: found.config as ConfigFile };
  }
  const candidate = path.resolve(cwd, explicitPath);
  let text: string;
  try {
    text = await readFile(candidate, 'utf8');
  } catch (error) {
    throw new ConfigError(
      `Cannot read the config file ${candidate}.`,
      'Check the path given to --config (or DATALYST_CONFIG).',
      error,
    );
  }
  return { path: candidate, config: parseConfigFile(text, candidate) };
}
