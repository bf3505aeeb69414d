/**
 * The environment, read once (openai-node's `readEnv`): the CLI calls
 * `readDatalystEnvironment()` at start-up and passes the result down, so no
 * other module reads `process.env` for settings and tests pass a plain object.
 */

/** One variable, trimmed; empty counts as unset (a `FOO=` in a shell profile should not switch anything on). */
export function readEnv(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/** Every variable Datalyst reads, by what it is for. */
export interface DatalystEnvironment {
  /** `DATALYST_API_KEY`, else `OPENAI_API_KEY`: sent as the bearer token to the model endpoint. */
  apiKey: string | undefined;
  /** `DATALYST_BASE_URL`, else `OPENAI_BASE_URL`: an OpenAI-compatible endpoint (vLLM, Ollama, LM Studio, OpenRouter). */
  baseUrl: string | undefined;
  /** `DATALYST_MODEL`: the model name; without one (and no `--model`) the offline analyst runs. */
  model: string | undefined;
  /** `DATALYST_PROFILE`: `deepanalyze` or `chat`. */
  profile: string | undefined;
  /** `DATALYST_SANDBOX`: `docker` or `local`. */
  sandbox: string | undefined;
  /** `DATALYST_IMAGE`: a runner image to use instead of the one built from docker/python-runner. */
  image: string | undefined;
  /** `DATALYST_RUNTIME`: `runc` or `runsc` (gVisor), the OCI runtime of Docker sessions (the sandbox reads the same name). */
  runtime: string | undefined;
  /** `DATALYST_CELL_TIMEOUT_MS`, `DATALYST_MEMORY_MB`, `DATALYST_CPUS`: sandbox limits (the sandbox reads the same names). */
  cellTimeoutMs: string | undefined;
  memoryMb: string | undefined;
  cpus: string | undefined;
  /** `DOCKER_HOST`: a remote engine (dockerode reads it itself; kept here for messages). */
  dockerHost: string | undefined;
  /** `DATALYST_CONFIG`: a config file to read when `--config` is not given. */
  configPath: string | undefined;
  /** `DATALYST_CHROMIUM`: the Chromium or Chrome binary that prints PDFs (default /usr/bin/chromium). */
  chromium: string | undefined;
  /** `NO_COLOR` (any non-empty value, https://no-color.org) turns colours off. */
  noColor: boolean;
  /** `FORCE_COLOR`: `0` turns colours off, any other value on, even when not a terminal. */
  forceColor: boolean | undefined;
  /** `TERM=dumb`: a terminal that cannot move the cursor; progress is printed as plain lines. */
  dumbTerminal: boolean;
}

export function readDatalystEnvironment(env: NodeJS.ProcessEnv = process.env): DatalystEnvironment {
  const forceColor = readEnv('FORCE_COLOR', env);
  return {
    // The DATALYST_ names win: OPENAI_* are often set machine-wide for other tools.
    apiKey: readEnv('DATALYST_API_KEY', env) ?? readEnv('OPENAI_API_KEY', env),
    baseUrl: readEnv('DATALYST_BASE_URL', env) ?? readEnv('OPENAI_BASE_URL', env),
    model: readEnv('DATALYST_MODEL', env),
    profile: readEnv('DATALYST_PROFILE', env),
    sandbox: readEnv('DATALYST_SANDBOX', env),
    image: readEnv('DATALYST_IMAGE', env),
    runtime: readEnv('DATALYST_RUNTIME', env),
    cellTimeoutMs: readEnv('DATALYST_CELL_TIMEOUT_MS', env),
    memoryMb: readEnv('DATALYST_MEMORY_MB', env),
    cpus: readEnv('DATALYST_CPUS', env),
    dockerHost: readEnv('DOCKER_HOST', env),
    configPath: readEnv('DATALYST_CONFIG', env),
    chromium: readEnv('DATALYST_CHROMIUM', env),
    noColor: readEnv('NO_COLOR', env) !== undefined,
    forceColor: forceColor === undefined ? undefined : forceColor !== '0' && forceColor !== 'false',
    dumbTerminal: readEnv('TERM', env) === 'dumb',
  };
}
