import { CancelledError } from '../errors/index.ts';
import type { Usage } from '../trace/schema.ts';
import { estimateMessagesTokens } from './context-budget.ts';
import type { AgentEvent } from './events.ts';
import type { ChatMessage, LanguageModel, ModelChunk } from './language-model.ts';
import { createTagParser, type ParsedStep } from './tag-parser.ts';

/** One model reply, read and split into steps. */
export interface ModelTurn {
  /** The reply as the model wrote it (with the re-appended closing tag), cut before an <Execute> it wrote. */
  text: string;
  /** Its steps, in order; never `execute`. */
  steps: ParsedStep[];
  finishReason: string | null;
  usage: Usage | null;
  durationMs: number;
  /** True when the model wrote an <Execute> block itself and the reply was cut there. */
  cutAtExecute: boolean;
  /** The prompt size the loop estimated, to calibrate against the usage the endpoint reports. */
  estimatedPromptTokens: number;
}

export interface ReadModelTurnOptions {
  model: LanguageModel;
  messages: ChatMessage[];
  stop: readonly string[];
  round: number;
  signal: AbortSignal;
  /** Turns a retry into an event (and a trace record). */
  onRetry: (chunk: Extract<ModelChunk, { type: 'retry' }>) => AgentEvent;
}

function* stepEvents(round: number, step: ParsedStep): Generator<AgentEvent, void, undefined> {
  if (step.kind === 'execute') return;
  yield { type: 'step-end', round, kind: step.kind, text: step.text, closed: step.closed };
  if (step.kind === 'code' && step.closed) yield { type: 'code-end', round, code: step.text };
}

/**
 * Streams one model reply through the tag parser, yielding text deltas and
 * finished steps as they come. Stops reading at an <Execute> the model writes
 * itself (it is inventing results; the request is ended). A retry that
 * discards streamed text restarts the parse (a `turn-restart` event says so).
 */
export async function* readModelTurn(
  options: ReadModelTurnOptions,
): AsyncGenerator<AgentEvent, ModelTurn, undefined> {
  const { round, signal } = options;
  const estimatedPromptTokens = estimateMessagesTokens(options.messages);
  const startedMs = performance.now();
  let parser = createTagParser();
  let text = '';
  let steps: ParsedStep[] = [];
  let finishReason: string | null = null;
  let usage: Usage | null = null;
  /** Where the model's own <Execute> starts in `text`, or null. */
  let executeOffset: number | null = null;

  const stream = options.model.stream({ messages: options.messages, stop: options.stop, signal });
  read: for await (const chunk of stream) {
    switch (chunk.type) {
      case 'text-delta':
        text += chunk.text;
        for (const event of parser.push(chunk.text)) {
          if (event.type === 'step-start') {
            if (event.kind === 'execute') {
              executeOffset = event.tagOffset ?? text.length;
              break read;
            }
          } else if (event.type === 'text-delta') {
            if (event.kind !== 'execute')
              yield { type: 'text-delta', round, tag: event.kind, text: event.text };
          } else if (event.step.kind !== 'execute') {
            steps.push(event.step);
            yield* stepEvents(round, event.step);
          }
        }
        break;
      case 'usage':
        usage = { promptTokens: chunk.promptTokens, completionTokens: chunk.completionTokens };
        break;
      case 'finish':
        finishReason = chunk.reason;
        break;
      case 'retry':
        yield options.onRetry(chunk);
        if (chunk.discardText) {
          parser = createTagParser();
          text = '';
          steps = [];
          yield { type: 'turn-restart', round, reason: chunk.reason };
        }
        break;
    }
  }
  if (signal.aborted) throw new CancelledError(signal.reason);
  if (executeOffset !== null) {
    // Cut where the parser saw the tag: the same chunk may hold more text, even another `<execute>`.
    text = text.slice(0, executeOffset).trimEnd();
  } else {
    for (const event of parser.end()) {
      if (event.type === 'step-end' && event.step.kind !== 'execute') {
        steps.push(event.step);
        yield* stepEvents(round, event.step);
      }
    }
  }
  return {
    text,
    steps,
    finishReason,
    usage,
    durationMs: performance.now() - startedMs,
    cutAtExecute: executeOffset !== null,
    estimatedPromptTokens,
  };
}
