import type { ChatMessage } from './language-model.ts';
import { capMiddle } from './execute-text.ts';

/** What a message in the conversation is, so compaction knows what it may shorten. */
/** `question`: a later question of a thread (or the user's reply to an <Ask>). */
export type ConversationEntryKind = 'system' | 'first' | 'question' | 'assistant' | 'execute' | 'nudge';

export interface ConversationEntry {
  kind: ConversationEntryKind;
  message: ChatMessage;
}

export interface CompactionResult {
  /** Execute messages shortened. */
  shortened: number;
  savedChars: number;
}

/**
 * Shortens older execution results, oldest first, keeping the `keepRecent`
 * latest ones whole. Code and the model's reasoning (assistant messages), the
 * instruction and the data profile are never touched: the model can recompute
 * an output but not recall why it wrote the code. Shortened results keep their
 * head and tail. Stops as soon as `tokensToSave` (estimated by `charsPerToken`)
 * are saved. Mutates `entries`.
 */
export function compactConversation(
  entries: ConversationEntry[],
  options: { keepRecent: number; maxCharsPerOldResult: number; charsToSave: number },
): CompactionResult {
  const executeIndexes = entries.flatMap((entry, index) => (entry.kind === 'execute' ? [index] : []));
  const older = executeIndexes.slice(0, Math.max(0, executeIndexes.length - options.keepRecent));
  let savedChars = 0;
  let shortened = 0;
  for (const index of older) {
    if (savedChars >= options.charsToSave) break;
    const entry = entries[index];
    if (entry === undefined || entry.message.content.length <= options.maxCharsPerOldResult) continue;
    const content = capMiddle(entry.message.content, options.maxCharsPerOldResult);
    const saved = entry.message.content.length - content.length;
    if (saved <= 0) continue;
    entries[index] = { kind: entry.kind, message: { role: entry.message.role, content } };
    savedChars += saved;
    shortened += 1;
  }
  return { shortened, savedChars };
}
