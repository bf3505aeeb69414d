import type { ChatMessage } from './language-model.ts';

/**
 * Token counts without a tokenizer: about 3.5 characters per token for
 * English, code and numbers (a cautious figure; real ratios run 3–4.5). The
 * loop calibrates it with the prompt tokens the endpoint reports, when it
 * reports them.
 */
const charsPerToken = 3.5;
// Chat templates add a few tokens per message (role markers).
const tokensPerMessage = 4;

export function estimateTokens(text: string): number {
  return Math.ceil(text.length / charsPerToken);
}

export function estimateMessagesTokens(messages: readonly ChatMessage[]): number {
  let total = 0;
  for (const message of messages) total += estimateTokens(message.content) + tokensPerMessage;
  return total;
}

/**
 * Scales estimates by what the endpoint counted: `observed / estimated` of the
 * last request, kept within [0.5, 3] so one odd report cannot derail it.
 */
export class TokenCalibration {
  private ratio = 1;

  observe(estimatedPromptTokens: number, reportedPromptTokens: number): void {
    if (estimatedPromptTokens <= 0 || reportedPromptTokens <= 0) return;
    this.ratio = Math.min(3, Math.max(0.5, reportedPromptTokens / estimatedPromptTokens));
  }

  tokens(messages: readonly ChatMessage[]): number {
    return Math.ceil(estimateMessagesTokens(messages) * this.ratio);
  }
}
