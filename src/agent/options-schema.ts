import { z } from 'zod';
import { ConfigError } from '../errors/index.ts';
import { firstOptionIssue } from '../util/option-names.ts';
import { defaultSandboxLimits, sandboxRuntimeNames } from '../sandbox/index.ts';
import type { AnalyzeOptions } from './analyze-options.ts';
import { modelProfileNames } from './model-profile.ts';
import type { ResumeThreadOptions, ThreadOptions } from './thread/thread-options.ts';

/*
 * The options of `analyze`, `streamAnalysis`, `openThread` and `resumeThread`
 * are checked here, before anything runs: a caller without TypeScript (or with
 * a cast) otherwise got a run that failed half-way with another error's name
 * (`maxRounds: -1` broke the trace's run-start record; `profile: 'gpt'` a
 * TypeError blamed on the sandbox). Each error names what it expected; the
 * schemas only check, the caller's objects are used as given.
 *
 * The options objects a person spells (the options, sandbox, its limits,
 * executeText, firstMessageLimits) are strict: `maxRound: 3` ran with the
 * default before, silently. Objects Datalyst hands out and the caller passes
 * back (a LanguageModel, a ModelProfile, a WorkspaceProfile) may carry more.
 */

const wholeAbove0 = 'a whole number above 0';
const wholeFrom0 = 'a whole number, 0 or more';
const numberAbove0 = 'a number above 0';

const positiveWhole = z
  .number({ error: wholeAbove0 })
  .int({ error: wholeAbove0 })
  .positive({ error: wholeAbove0 });
const nonNegativeWhole = z
  .number({ error: wholeFrom0 })
  .int({ error: wholeFrom0 })
  .nonnegative({ error: wholeFrom0 });
const positiveNumber = z.number({ error: numberAbove0 }).positive({ error: numberAbove0 });
const text = z.string({ error: 'a string' }).min(1, { error: 'a string that is not empty' });
const aFunction = (expected: string) =>
  z.custom<(...args: never[]) => unknown>((value) => typeof value === 'function', { error: expected });

const languageModelSchema = z.object(
  {
    id: text,
    contextWindowTokens: positiveWhole,
    maxReplyTokens: positiveWhole.optional(),
    stream: aFunction('a function (request) => AsyncIterable<ModelChunk>'),
  },
  { error: 'a LanguageModel: createOfflineAnalyst(), createOpenAIChatModel({ baseUrl, model }) or your own' },
);

const profileText = "'chat', 'deepanalyze' or a ModelProfile object";
const profileSchema = z.union(
  [
    z.enum(modelProfileNames),
    z.object({
      name: z.enum(modelProfileNames),
      systemPrompt: z.string().nullable(),
      executeRole: z.enum(['execute', 'user']),
      wrapExecute: z.boolean(),
      stop: z.array(z.string()),
    }),
  ],
  { error: profileText },
);

const sandboxLimitsSchema = z.strictObject(
  Object.fromEntries(Object.keys(defaultSandboxLimits).map((key) => [key, positiveNumber.optional()])),
  { error: 'an object of limits, e.g. { cellTimeoutMs: 60000 }' },
);

const sandboxSchema = z.strictObject(
  {
    backend: z.enum(['docker', 'local'], { error: "'docker' or 'local'" }).optional(),
    image: text.optional(),
    runtime: z
      .enum(sandboxRuntimeNames, { error: sandboxRuntimeNames.map((name) => `'${name}'`).join(' or ') })
      .optional(),
    limits: sandboxLimitsSchema.optional(),
    excludeDirs: z.array(z.string(), { error: 'a list of folder names' }).optional(),
  },
  { error: 'an object of sandbox options (backend, image, runtime, limits)' },
);

const wholeRecord = (keys: readonly string[], expected: string) =>
  z.strictObject(Object.fromEntries(keys.map((key) => [key, nonNegativeWhole.optional()])), {
    error: expected,
  });

const runOptionsShape = {
  workspaceDir: text,
  model: languageModelSchema,
  profile: profileSchema.optional(),
  createSandbox: aFunction('a function (options) => Promise<SandboxSession>').optional(),
  sandbox: sandboxSchema.optional(),
  outDir: text.optional(),
  runsDir: text.optional(),
  runId: text.optional(),
  maxRounds: positiveWhole.optional(),
  deadlineMs: positiveNumber.nullable().optional(),
  contextBudgetTokens: positiveWhole.optional(),
  replyReserveTokens: positiveWhole.optional(),
  maxStalledTurns: positiveWhole.optional(),
  maxRepeatedFailures: positiveWhole.optional(),
  stopWhen: z
    .array(aFunction('a function (state) => StopDecision | null'), { error: 'a list of stop conditions' })
    .optional(),
  executeText: wholeRecord(['maxChars', 'maxNamedFiles'], 'an object { maxChars, maxNamedFiles }').optional(),
  maxArtifactBytes: nonNegativeWhole.optional(),
  maxArtifactFiles: nonNegativeWhole.optional(),
  firstMessageLimits: wholeRecord(
    [
      'maxProfiledFiles',
      'maxListedFiles',
      'maxDataChars',
      'maxColumnsPerTable',
      'maxTablesPerFile',
      'maxSamplesPerColumn',
    ],
    'an object of first-message limits',
  ).optional(),
  maxTraceFigureBytes: nonNegativeWhole.optional(),
  traceSync: z.enum(['record', 'finish'], { error: "'record' or 'finish'" }).optional(),
  signal: z.instanceof(AbortSignal, { error: 'an AbortSignal' }).optional(),
};

const threadShape = {
  ...runOptionsShape,
  askMode: z.enum(['pause', 'reply'], { error: "'pause' or 'reply'" }).optional(),
  idleTimeoutMs: positiveNumber.nullable().optional(),
  whenNoFiles: z.enum(['stop', 'ask-model'], { error: "'stop' or 'ask-model'" }).optional(),
  workspaceProfile: z.object({ files: z.array(z.unknown()) }, { error: 'a WorkspaceProfile' }).optional(),
};

const optionsObject = 'an options object';
const analyzeOptionsSchema = z.strictObject(
  { ...runOptionsShape, instruction: text },
  { error: optionsObject },
);
const threadOptionsSchema = z.strictObject(threadShape, { error: optionsObject });
const resumeThreadOptionsSchema = z.strictObject(
  { ...threadShape, workspaceDir: text.optional() },
  { error: optionsObject },
);

/** What the person passed, for the message: short, and never a whole object. */
function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return 'a list';
  return 'an object';
}

function valueAt(root: unknown, keys: readonly PropertyKey[]): unknown {
  let value = root;
  for (const key of keys) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/** Options without which nothing can run: their fix cannot be "leave it out". */
const required = new Set(['instruction', 'workspaceDir', 'model']);

function check(schema: z.ZodType, options: unknown, entryPoint: string): void {
  const parsed = schema.safeParse(options);
  if (parsed.success) return;
  const issue = firstOptionIssue(schema, parsed.error, entryPoint);
  if (issue === undefined) return;
  const got = describeValue(valueAt(options, issue.path));
  if (issue.path.length === 0) {
    throw new ConfigError(
      `${entryPoint} takes ${optionsObject}; got ${got}.`,
      `Call ${entryPoint} with an object, e.g. { workspaceDir: 'data', model: createOfflineAnalyst() }.`,
      parsed.error,
    );
  }
  const name = issue.path.map(String).join('.');
  const top = String(issue.path[0]);
  const more =
    parsed.error.issues.length > 1 ? ` (${parsed.error.issues.length - 1} more option(s) are wrong too)` : '';
  throw new ConfigError(
    `The option ${name} of ${entryPoint} must be ${issue.message}; got ${got}.${more}`,
    required.has(top)
      ? `Pass ${name} as ${issue.message}.`
      : `Pass ${name} as ${issue.message}, or leave it out for its default.`,
    parsed.error,
  );
}

/** Checks of option values, for a caller that adds options of its own to a run's (`runOptionsWith`). */
export const optionValue = { positiveWhole, positiveNumber, aFunction } as const;

/**
 * Throws ConfigError naming the first option that is wrong, for a run's options plus `extra` of the
 * caller's own (deepAnalyze's budgets and roles), strict like the run's: a misspelt name is said before
 * anything runs, not by a sub-analysis's openThread half-way.
 */
export function assertRunOptionsWith(options: unknown, extra: z.ZodRawShape, entryPoint: string): void {
  check(
    z.strictObject({ ...runOptionsShape, instruction: text, ...extra }, { error: optionsObject }),
    options,
    entryPoint,
  );
}

/** Throws ConfigError naming the first option that is wrong (see the top of this file). */
export function assertAnalyzeOptions(options: AnalyzeOptions, entryPoint = 'analyze()'): void {
  check(analyzeOptionsSchema, options, entryPoint);
}

export function assertThreadOptions(options: ThreadOptions): void {
  check(threadOptionsSchema, options, 'openThread()');
}

export function assertResumeThreadOptions(options: ResumeThreadOptions): void {
  check(resumeThreadOptionsSchema, options, 'resumeThread()');
}
