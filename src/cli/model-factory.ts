import { deepAnalyzeExtraBody, deepAnalyzeTemperature } from '../agent/index.ts';
import type { ModelSettings } from '../config/index.ts';
import { createOfflineAnalyst, createOpenAIChatModel } from '../index.ts';
import type { LanguageModel } from '../index.ts';
import { OPENAI_DEFAULT_BASE_URL } from './openai-default.ts';

/** The model a run talks to: the built-in offline analyst, or an OpenAI-compatible endpoint. */
export function createModel(settings: ModelSettings): LanguageModel {
  if (settings.kind === 'offline') return createOfflineAnalyst();
  return createOpenAIChatModel({
    baseUrl: settings.baseUrl ?? OPENAI_DEFAULT_BASE_URL,
    model: settings.id,
    ...(settings.apiKey === null ? {} : { apiKey: settings.apiKey }),
    // What DeepAnalyze's own client sends to vLLM with every request.
    ...(settings.profile === 'deepanalyze'
      ? { extraBody: { ...deepAnalyzeExtraBody }, temperature: deepAnalyzeTemperature }
      : {}),
  });
}
