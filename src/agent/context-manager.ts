import type { NoticeKind } from '../trace/schema.ts';
import { TokenCalibration } from './context-budget.ts';
import {
  compactConversation,
  type ConversationEntry,
  type ConversationEntryKind,
} from './context-compaction.ts';
import type { ChatMessage } from './language-model.ts';
import { finalAnswerRequest, lastRoundAnswerRequest } from './model-notes.ts';
import type { MutableLoopState } from './stop-conditions.ts';

export interface ContextSettings {
  contextBudgetTokens: number;
  /** Room kept free for one reply. */
  replyReserveTokens: number;
  maxRounds: number;
}

/** A notice the loop records and streams, for something done to the conversation. */
export interface ContextNotice {
  kind: NoticeKind;
  text: string;
}

/**
 * The conversation the model sees, and its size: messages in order, each with
 * what it is (so compaction knows what it may shorten), token estimates
 * calibrated by what the endpoint counts, and the one request for a final
 * answer near the budget or before the last round.
 */
export class ContextManager {
  private readonly entries: ConversationEntry[] = [];
  private readonly calibration = new TokenCalibration();

  constructor(private readonly settings: ContextSettings) {}

  add(kind: ConversationEntryKind, message: ChatMessage): void {
    this.entries.push({ kind, message });
  }

  /**
   * The messages as sent. User messages in a row (a question after results
   * the model never replied to: its turn was stopped) are joined into one:
   * some chat templates (Gemma's, older Mistral's) refuse two user messages
   * in a row. They stay apart in `entries`, so compaction can shorten the
   * results and never the question.
   */
  messages(): ChatMessage[] {
    const messages: ChatMessage[] = [];
    for (const { message } of this.entries) {
      const last = messages.at(-1);
      if (last?.role === 'user' && message.role === 'user')
        messages[messages.length - 1] = { role: 'user', content: `${last.content}\n\n${message.content}` };
      else messages.push(message);
    }
    return messages;
  }

  /** The conversation's size in tokens, estimated and calibrated. */
  tokens(): number {
    return this.calibration.tokens(this.messages());
  }

  /** Calibrates estimates with the prompt tokens the endpoint counted for a request. */
  observePromptTokens(estimated: number, reported: number): void {
    this.calibration.observe(estimated, reported);
  }

  /** Adds a note for the model; merged into a user message that is already last (templates want alternating roles). */
  tellModel(text: string): void {
    const last = this.entries.at(-1);
    if (last !== undefined && last.message.role === 'user' && last.kind !== 'first') {
      this.entries[this.entries.length - 1] = {
        kind: last.kind,
        message: { role: 'user', content: `${last.message.content}\n\n${text}` },
      };
      return;
    }
    this.entries.push({ kind: 'nudge', message: { role: 'user', content: text } });
  }

  /**
   * Opens the message of a thread's next question with a note on how the
   * previous turn ended (it was stopped): a user message of its own, so the
   * question that `addQuestion` adds to it is never read as part of the
   * stopped turn's last output.
   */
  beginQuestion(note: string): void {
    this.entries.push({ kind: 'question', message: { role: 'user', content: note } });
  }

  /**
   * Adds the next question of a thread (a follow-up, or the reply to an
   * <Ask>). Merged into a note or question that is already last, never into
   * execution results or the first message: compaction shortens results, and
   * the question must survive it whole. After results the model never replied
   * to (its turn was stopped), the question is an entry of its own, which
   * `messages()` joins to the results for the wire, after the stop's note.
   */
  addQuestion(text: string): void {
    const last = this.entries.at(-1);
    if (
      last !== undefined &&
      last.message.role === 'user' &&
      (last.kind === 'question' || last.kind === 'nudge')
    ) {
      this.entries[this.entries.length - 1] = {
        kind: 'question',
        message: { role: 'user', content: `${last.message.content}\n\n${text}` },
      };
      return;
    }
    this.entries.push({ kind: 'question', message: { role: 'user', content: text } });
  }

  /**
   * Before a new question of a thread (already added): the outputs of
   * earlier turns are shortened first, every one of them if need be; then
   * says whether a reply still fits in the thread's budget. Returns the
   * conversation's size and what was done, for the trace.
   */
  prepareNewTurn(): { fits: boolean; tokens: number; notices: ContextNotice[] } {
    const { contextBudgetTokens, replyReserveTokens } = this.settings;
    // Every output of earlier turns may be shortened: none of them is the current turn's.
    const { tokens, notices } = this.compactOver(
      0,
      (shortened) => `${shortened} execution output${shortened === 1 ? '' : 's'} of earlier turns`,
    );
    return { fits: tokens + replyReserveTokens <= contextBudgetTokens, tokens, notices };
  }

  /**
   * Past 70 % of the budget, shortens old execution outputs (all but the
   * `keepRecent` latest) until about 80 % of that mark; a notice says what.
   */
  private compactOver(
    keepRecent: number,
    describe: (shortened: number) => string,
  ): { tokens: number; notices: ContextNotice[] } {
    const notices: ContextNotice[] = [];
    const compactAt = Math.floor(this.settings.contextBudgetTokens * 0.7);
    let tokens = this.tokens();
    if (tokens > compactAt) {
      const before = tokens;
      const { shortened } = compactConversation(this.entries, {
        keepRecent,
        maxCharsPerOldResult: 1500,
        charsToSave: Math.ceil((tokens - compactAt * 0.8) * 3.5),
      });
      if (shortened > 0) {
        tokens = this.tokens();
        notices.push({
          kind: 'compaction',
          text: `Shortened ${describe(shortened)} (about ${before} → ${tokens} tokens).`,
        });
      }
    }
    return { tokens, notices };
  }

  /**
   * Before the next turn: shortens old outputs when the conversation grows,
   * and asks once for the final answer near the budget or before the last
   * round. Returns what it did, for the trace.
   */
  prepareNextTurn(round: number, state: MutableLoopState): ContextNotice[] {
    const { contextBudgetTokens, replyReserveTokens, maxRounds } = this.settings;
    const { tokens, notices } = this.compactOver(
      2,
      (shortened) => `${shortened} older execution output${shortened === 1 ? '' : 's'}`,
    );
    if (tokens + replyReserveTokens > contextBudgetTokens && state.finalAnswerRequestedAtRound === null) {
      state.finalAnswerRequestedAtRound = round;
      state.finalAnswerRequestReason = 'context-budget';
      this.tellModel(finalAnswerRequest);
      notices.push({ kind: 'final-answer-request', text: finalAnswerRequest });
    } else if (round + 1 === maxRounds && state.finalAnswerRequestedAtRound === null) {
      // Without this, a run that hits the round limit ends with no answer at all.
      state.finalAnswerRequestedAtRound = round;
      state.finalAnswerRequestReason = 'max-rounds';
      this.tellModel(lastRoundAnswerRequest);
      notices.push({ kind: 'final-answer-request', text: lastRoundAnswerRequest });
    }
    state.contextTokens = this.tokens();
    return notices;
  }
}
