import type { ModelSettings } from '../config/index.ts';
import { ModelUnavailableError } from '../errors/index.ts';
import { checkModelEndpoint } from './commands/doctor.ts';
import { OPENAI_DEFAULT_BASE_URL } from './openai-default.ts';

/** Long enough for a server on the LAN or a hosted API; short enough that a wrong URL is known at once. */
export const MODEL_PREFLIGHT_TIMEOUT_MS = 2000;

/** Hosted APIs that refuse every request without a key: asking them first would only say so later. */
const HOSTS_NEEDING_A_KEY = new Set(['api.openai.com', 'openrouter.ai']);

/**
 * One quick look at the model endpoint before a container starts (doctor's
 * GET <base>/models): an endpoint that is not there, refuses the key or
 * does not serve the model fails the run in two seconds with the real cause
 * (`connect ECONNREFUSED 127.0.0.1:18099`), not after the sandbox started and
 * the client's retries ran out. An endpoint without a /models route passes,
 * with a warning. Returns what to tell the person.
 */
export async function checkModelBeforeRun(
  model: Extract<ModelSettings, { kind: 'endpoint' }>,
  timeoutMs: number = MODEL_PREFLIGHT_TIMEOUT_MS,
): Promise<{ detail: string; warning: string | null }> {
  const baseUrl = model.baseUrl ?? OPENAI_DEFAULT_BASE_URL;
  const host = URL.canParse(baseUrl) ? new URL(baseUrl).hostname : '';
  if (model.apiKey === null && HOSTS_NEEDING_A_KEY.has(host)) {
    throw new ModelUnavailableError(`${baseUrl} needs an API key and none is set.`, {
      fix:
        host === 'api.openai.com'
          ? 'Set OPENAI_API_KEY (or DATALYST_API_KEY), or pass --api-key; for a local server pass --base-url.'
          : 'Set DATALYST_API_KEY (or OPENAI_API_KEY), or pass --api-key.',
    });
  }
  const check = await checkModelEndpoint(model, timeoutMs);
  if (check.status === 'fail') {
    throw new ModelUnavailableError(`${check.detail}.`, { fix: check.fix ?? 'Run `datalyst doctor`.' });
  }
  return {
    detail: check.detail,
    warning: check.status === 'warn' ? `${check.detail}. ${check.fix ?? ''}`.trim() : null,
  };
}
