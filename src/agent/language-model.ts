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
  | { type: 'finish'; reason: string }
  /**
   * The request failed and is sent again after `delayMs`. When `discardText`
   * is true, text of this turn was already streamed and must be thrown away:
   * the retry starts the reply over.
   */
  | { type: 'retry'; retry: number; delayMs: number; reason: string; discardText: boolean };

export interface LanguageModel {
  /** The model name, as sent to the endpoint and written in reports. */
  readonly id: string;
  /** Context window in tokens; the loop's budget is taken from it. */
  readonly contextWindowTokens: number;
  /** Tokens one reply may take (the request's max tokens), when known; the loop keeps that much room free. */
  readonly maxReplyTokens?: number;
  /** The endpoint, for the trace; absent for models that are not served over HTTP. */
  readonly baseUrl?: string;
  /** True for the built-in offline analyst (no language model at all); reports label it. */
  readonly offline?: boolean;
  stream(request: ModelRequest): AsyncIterable<ModelChunk>;
}
