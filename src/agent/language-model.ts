/**
 * What the loop needs from a model: messages in, streamed text out. The
 * OpenAI-compatible client, the offline analyst and test doubles implement it.
 */

/** `execute` is DeepAnalyze-8B's role for execution results; chat profiles send them as `user`. */
export type ChatRole = 'system' | 'user' | 'assistant' | 'execute';

export interface ChatMessage {
  role: ChatRole;
  content: string;
}

export interface ModelRequest {
  messages: readonly ChatMessage[];
  /** Generation stops at these; the model client re-appends the closing tag it stopped at. */
  stop: readonly string[];
  signal?: AbortSignal;
}

export type ModelChunk =
  | { type: 'text-delta'; text: string }
  | { type: 'usage'; promptTokens: number; completionTokens: number }
  | { type: 'finish'; reason: string };

export interface LanguageModel {
  /** The model name, as sent to the endpoint and written in reports. */
  readonly id: string;
  /** Context window in tokens; the loop's budget is taken from it. */
  readonly contextWindowTokens: number;
  stream(request: ModelRequest): AsyncIterable<ModelChunk>;
}
