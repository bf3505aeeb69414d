import { z } from 'zod';
import { ConfigError } from '../errors/index.ts';
import { firstOptionIssue } from '../util/option-names.ts';

/*
 * The options of `createOpenAIChatModel`, checked when the model is made:
 * `{ baseURL }` (the OpenAI SDK's spelling) or no options at all were
 * TypeErrors from inside, a missing `model` a client with id undefined that
 * failed only at the first request, and a URL that is not http(s) was
 * retried for seconds and reported as a server outage.
 */

const urlText = 'an http:// or https:// URL, e.g. http://localhost:8000/v1';
const httpUrl = z.string({ error: urlText }).refine(
  (value) => {
    try {
      const url = new URL(value);
      return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
    } catch {
      return false;
    }
  },
  { error: urlText },
);
const nonNegativeWhole = z.number().int().nonnegative();

const schema = z.strictObject({
  baseUrl: httpUrl,
  model: z
    .string({ error: 'a model name, e.g. DeepAnalyze-8B' })
    .min(1, { error: 'a model name that is not empty' }),
  apiKey: z.string({ error: 'a string' }).optional(),
  temperature: z.number({ error: 'a number' }).optional(),
  maxTokens: z.number().int().positive({ error: 'a whole number above 0' }).optional(),
  extraBody: z.record(z.string(), z.unknown(), { error: 'an object' }).optional(),
  contextWindowTokens: z.number().int().positive({ error: 'a whole number above 0' }).optional(),
  retry: z
    .strictObject(
      {
        maxRetries: nonNegativeWhole.optional(),
        initialDelayMs: nonNegativeWhole.optional(),
        maxDelayMs: nonNegativeWhole.optional(),
      },
      { error: 'an object { maxRetries, initialDelayMs, maxDelayMs }' },
    )
    .optional(),
  idleTimeoutMs: z.number().positive({ error: 'a number above 0' }).optional(),
  includeUsage: z.boolean({ error: 'true or false' }).optional(),
  fetch: z
    .custom<typeof fetch>((value) => typeof value === 'function', { error: 'a fetch function' })
    .optional(),
});

const entryPoint = 'createOpenAIChatModel()';
const example = "createOpenAIChatModel({ baseUrl: 'http://localhost:8000/v1', model: 'DeepAnalyze-8B' })";

export function assertOpenAIChatModelOptions(options: unknown): void {
  if (typeof options !== 'object' || options === null) {
    throw new ConfigError(
      `${entryPoint} takes an options object; got ${String(options)}.`,
      `Call ${example}.`,
    );
  }
  const parsed = schema.safeParse(options);
  if (parsed.success) return;
  // { baseURL } is reported as a misspelling of baseUrl, not as baseUrl missing.
  const issue = firstOptionIssue(schema, parsed.error, entryPoint);
  if (issue === undefined) return;
  const name = issue.path.map(String).join('.');
  const value: unknown = (options as Record<string, unknown>)[String(issue.path[0])];
  // A URL or a key can hold a secret (user:password@, ?api_key=): errors are printed and logged, so it is not echoed.
  const secretive = name === 'baseUrl' || name === 'apiKey';
  const got =
    value === undefined
      ? 'nothing'
      : typeof value === 'string'
        ? secretive
          ? 'a string (not repeated here: it may hold a key)'
          : JSON.stringify(value)
        : typeof value;
  const required = name === 'baseUrl' || name === 'model';
  throw new ConfigError(
    `The option ${name} of ${entryPoint} must be ${issue.message}; got ${got}.`,
    required
      ? `Pass ${name}, e.g. ${example}.`
      : `Pass ${name} as ${issue.message}, or leave it out for its default.`,
    parsed.error,
  );
}
