import { z } from 'zod';
import { assertRunOptionsWith, optionValue } from '../agent/index.ts';
import type { AnalyzeOptions } from '../agent/index.ts';
import type { WarmPool } from '../sandbox/index.ts';
import type { DeepRoles } from './deep-roles.ts';
import type { DeepEvent } from './deep-events.ts';

/**
 * One deep analysis (`analyze --deep`): the options of a run, plus the
 * thinking parts, the parallelism and the budgets of the whole run. Limits of
 * the single loop (`maxRounds`, `contextBudgetTokens`, …) apply to each
 * sub-analysis; `deadlineMs` is the whole deep run's.
 *
 * @example
 * const result = await deepAnalyze({
 *   instruction: 'Generate a data science report.',
 *   workspaceDir: './data',
 *   model: createOpenAIChatModel({ baseUrl: 'http://localhost:8000/v1', model: 'gpt-4o-mini' }),
 *   maxSubAnalyses: 4,
 *   onEvent: (event) => console.log(event.type),
 * });
 * console.log(result.termination.reason, result.outDir); // deep.json and sub/S1/… there
 */
export interface DeepAnalyzeOptions extends Omit<AnalyzeOptions, 'deadlineMs'> {
  /** The thinking parts. Default: the model roles of `model`, or the offline roles when `model` is the offline analyst. */
  roles?: DeepRoles;
  /** Sub-analyses in the whole run at most, the planner's gaps included. Default 4. */
  maxSubAnalyses?: number;
  /** Sub-analyses (and written sections) at once at most. Default the machine's cores. */
  concurrency?: number;
  /** Outlines at most; each but the last may send sub-analysts after gaps. Default 2. */
  maxPlanningRounds?: number;
  /**
   * Wall-clock limit of the research, from the start; null for none. When it
   * passes, running sub-analyses are cancelled and the report is written from
   * what exists (a forced final report, ending `deadline`). Default null.
   */
  deadlineMs?: number | null;
  /** Time the forced final report (outline and sections) may take after the deadline or token budget. Default 120 000. */
  finalReportMs?: number;
  /** Prompt plus completion tokens of the whole run (every role and sub-analysis); past it the report is written from what exists. Default none. */
  tokenBudget?: number | null;
  /** May the scope step ask the user a question first (the run then ends `asked`)? Default false. */
  mayAsk?: boolean;
  /**
   * Where sub-analysis sessions come from when `createSandbox` is not given:
   * a warm pool (kernels started ahead, pandas imported). Default: the run's
   * own pool of `concurrency` sessions on the Docker backend, closed at the end.
   */
  warmPool?: WarmPool;
  /** Progress: every deep event, in order. `streamDeepAnalysis` yields the same events. */
  onEvent?: (event: DeepEvent) => void;
}

/**
 * Throws ConfigError naming the first wrong option of `deepAnalyze`: the run's options as `analyze`
 * checks them, and the deep ones; a misspelt name (`maxSubAnalysis`) is said before the folder is
 * claimed, not by every sub-analysis's openThread half-way through the run.
 */
export function assertDeepAnalyzeOptions(options: DeepAnalyzeOptions): void {
  const { positiveWhole, positiveNumber, aFunction } = optionValue;
  assertRunOptionsWith(
    options,
    {
      roles: z.looseObject({}, { error: 'a DeepRoles object' }).optional(),
      maxSubAnalyses: positiveWhole.optional(),
      concurrency: positiveWhole.optional(),
      maxPlanningRounds: positiveWhole.optional(),
      finalReportMs: positiveNumber.optional(),
      tokenBudget: positiveNumber.nullable().optional(),
      mayAsk: z.boolean({ error: 'true or false' }).optional(),
      warmPool: z.looseObject({}, { error: 'a WarmPool' }).optional(),
      onEvent: aFunction('a function (event) => void').optional(),
    },
    'deepAnalyze()',
  );
}
