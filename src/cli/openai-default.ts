/**
 * The openai package's own default, named so the trace and messages show it.
 * Apart from model-factory.ts, which loads the openai package, so that doctor need not.
 */
export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';
