import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createOpenAIChatModel, type OpenAIChatModelOptions } from '../../src/agent/index.ts';
import { ConfigError, DatalystError } from '../../src/errors/index.ts';
import { createSandbox } from '../../src/sandbox/index.ts';

/**
 * Regression: createOpenAIChatModel({ baseURL }) and createOpenAIChatModel()
 * threw TypeErrors from inside, a missing model made a client with id
 * undefined, a URL that is not http(s) was retried as a server outage, and
 * createSandbox({ backend: 'podman' }) was a TypeError. Each is a ConfigError
 * naming the option, at once.
 */

function refusal(make: () => unknown): DatalystError {
  let error: unknown = null;
  try {
    make();
  } catch (caught) {
    error = caught;
  }
  expect(error).toBeInstanceOf(ConfigError);
  if (!DatalystError.isInstance(error)) throw new Error('not a DatalystError');
  expect(error.code).toBe('CONFIG_INVALID');
  return error;
}

const make = (options: unknown) => () => createOpenAIChatModel(options as OpenAIChatModelOptions);

describe('createOpenAIChatModel options', () => {
  it('baseURL (the OpenAI SDK spelling) names baseUrl', () => {
    const error = refusal(make({ baseURL: 'http://localhost:8000/v1', model: 'm' }));
    expect(error.message).toBe('createOpenAIChatModel() has no option baseURL (did you mean baseUrl?).');
    expect(error.cause).toBeDefined();
  });

  it('no options, or no model, is refused when the model is made', () => {
    expect(refusal(make(undefined)).message).toContain('takes an options object');
    const error = refusal(make({ baseUrl: 'http://localhost:8000/v1' }));
    expect(error.message).toBe(
      'The option model of createOpenAIChatModel() must be a model name, e.g. DeepAnalyze-8B; got nothing.',
    );
    expect(error.fix).toContain("model: 'DeepAnalyze-8B'");
  });

  it('a URL that is not http(s) is refused at once', () => {
    for (const baseUrl of ['not a url', 'ftp://example.invalid/v1']) {
      const error = refusal(make({ baseUrl, model: 'm' }));
      expect(error.message).toContain('must be an http:// or https:// URL');
    }
    expect(() => createOpenAIChatModel({ baseUrl: 'https://example.invalid/v1', model: 'm' })).not.toThrow();
  });

  it('does not repeat a refused URL, which may hold a key', () => {
    const error = refusal(make({ baseUrl: 'localhost:8000/v1?api_key=sk-SECRET', model: 'm' }));
    expect(`${error.message} ${error.fix}`).not.toContain('sk-SECRET');
  });
});

describe('createSandbox options', () => {
  it("backend: 'podman' is a ConfigError naming the backends", async () => {
    const error: unknown = await createSandbox({ backend: 'podman' as 'docker' }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect(DatalystError.isInstance(error) && error.message).toContain(
      "must be 'docker' or 'local'; got \"podman\"",
    );
  });
});

describe('a model endpoint nothing listens at', () => {
  it("names the system error (ECONNREFUSED) under the SDK's 'Connection error.'", async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const model = createOpenAIChatModel({
      baseUrl: `http://127.0.0.1:${port}/v1`,
      model: 'm',
      retry: { maxRetries: 1, initialDelayMs: 10 },
    });
    const error = await (async () => {
      try {
        for await (const _chunk of model.stream({ messages: [{ role: 'user', content: 'hi' }], stop: [] })) {
          // nothing arrives
        }
      } catch (caught) {
        return caught;
      }
      return null;
    })();
    expect(DatalystError.isInstance(error)).toBe(true);
    if (!DatalystError.isInstance(error)) return;
    expect(error.code).toBe('MODEL_UNAVAILABLE');
    expect(error.message).toContain('(ECONNREFUSED)');
  });
});
