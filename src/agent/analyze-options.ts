import type { SandboxOptions, SandboxSession } from '../sandbox/index.ts';
import type { FirstMessageLimits } from './first-message.ts';
import type { ExecuteTextOptions } from './execute-text.ts';
import type { LanguageModel } from './language-model.ts';
import type { ModelProfile, ModelProfileName } from './model-profile.ts';
import type { StopCondition } from './stop-conditions.ts';

/** Opens one sandbox session. `createSandbox` from the sandbox folder is one; tests pass their own. */
export type SandboxFactory = (options: SandboxOptions) => Promise<SandboxSession>;

/**
 * One analysis run. Only `instruction`, `workspaceDir` and `model` are required.
 *
 * @example
 * const result = await analyze({
 *   instruction: 'Which teaching method works better?',
 *   workspaceDir: './data',
 *   model: createOpenAIChatModel({ baseUrl: 'http://localhost:8000/v1', model: 'DeepAnalyze-8B' }),
 *   profile: 'deepanalyze',
 * });
 */
export interface AnalyzeOptions {
  instruction: string;
  /** The data folder. It is hashed on the host and copied into the sandbox; never written. */
  workspaceDir: string;
  model: LanguageModel;
  /** How to talk to the model. Default `chat`; `deepanalyze` for DeepAnalyze-8B. */
  profile?: ModelProfile | ModelProfileName;
  /** Opens the sandbox session. Default `createSandbox` from the sandbox folder (Docker, `DATALYST_SANDBOX`). */
  createSandbox?: SandboxFactory;
  /** Passed to `createSandbox` (backend, image, limits). */
  sandbox?: Omit<SandboxOptions, 'workspaceDir' | 'signal'>;
  /**
   * The run folder (trace.jsonl, trace.json, artifacts/). Default `<runsDir>/<runId>`.
   * One inside `workspaceDir` is left out of the workspace's files (added to `sandbox.excludeDirs`).
   */
  outDir?: string;
  /** Where run folders go when `outDir` is not given. Default `runs` under the current directory. */
  runsDir?: string;
  /** Default: a timestamp and a random suffix. */
  runId?: string;
  /** Model turns at most. Default 30. */
  maxRounds?: number;
  /** Wall-clock limit of the whole run; null for none. Default null. */
  deadlineMs?: number | null;
  /** Budget for the conversation. Default 85 % of the model's context window. */
  contextBudgetTokens?: number;
  /** Room kept free for one reply; when the conversation would eat into it, the model is asked for its final answer. Default the model's max reply tokens (4096 when unknown), at most a quarter of the budget. */
  replyReserveTokens?: number;
  /** Consecutive turns without code or answer before the run stops (the model is nudged before). Default 3. */
  maxStalledTurns?: number;
  /** Times the same code may fail in a row before the run stops (the model is nudged before). Default 3. */
  maxRepeatedFailures?: number;
  /** Extra stop conditions, checked after the built-in ones. */
  stopWhen?: readonly StopCondition[];
  /** How cell output is shown to the model. */
  executeText?: Partial<ExecuteTextOptions>;
  /** Caps on the files copied out of the sandbox. Default 64 MiB and 200 files per run. */
  maxArtifactBytes?: number;
  maxArtifactFiles?: number;
  /** How much of the workspace profile goes into the first message. */
  firstMessageLimits?: Partial<FirstMessageLimits>;
  /**
   * Bytes of figures (base64 PNG) and charts (vega-lite JSON) kept in the
   * trace per run. Past it, a figure or chart keeps its id and size in the
   * trace, marked `omitted`, and a notice says so. Default 96 MiB.
   */
  maxTraceFigureBytes?: number;
  /** `record` fsyncs the trace after every record. Default `finish`. */
  traceSync?: 'record' | 'finish';
  /** Cancels the run: the running cell is interrupted, the session closed, the trace ended with `cancelled`. */
  signal?: AbortSignal;
}
