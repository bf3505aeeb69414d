import type { ExecutionRecord } from '../../trace/schema.ts';
import type { AgentEvent } from '../events.ts';
import type { ChatMessage, LanguageModel } from '../language-model.ts';
import { readModelTurn, type ModelTurn } from '../model-turn.ts';

/** What the model is told: one turn, no tools, no code. */
export const rewriteSystemPrompt = `You update the answer of an earlier data analysis for new data.
The earlier analysis ran Python cells on the data and wrote an answer from their outputs. The same cells were just run again on new files of the same shape; you get the question, the earlier answer and the new outputs (each headed by its output id, e.g. E3).
Write the answer again so that it is true of the new outputs: keep its structure and scope, take every number from the new outputs (never from the earlier answer), and where the new outputs no longer support a statement, change or drop it. Do not invent numbers that no output printed. Write no code.
Reply with the new answer only, inside <Answer>...</Answer>.`;

/** The one user message: the question, the earlier answer, the new outputs. */
export function rewriteUserMessage(
  question: string,
  oldAnswer: string,
  executions: readonly ExecutionRecord[],
): string {
  const outputs = executions
    .map((execution) => `## ${execution.outputId} (${execution.result.status})\n${execution.executeText}`)
    .join('\n\n');
  return `# Question\n${question}\n\n# Earlier answer\n${oldAnswer}\n\n# New outputs\n${outputs}`;
}

export interface RewrittenAnswer {
  answer: string;
  turn: ModelTurn;
  messages: ChatMessage[];
}

/**
 * Asks the model once for the answer rewritten from the new outputs. Its
 * `<Answer>` is taken; a reply without one is taken whole (trimmed), as the
 * model's answer. Model failures throw (ModelUnavailableError, CancelledError).
 */
export async function* rewriteAnswer(options: {
  model: LanguageModel;
  question: string;
  oldAnswer: string;
  executions: readonly ExecutionRecord[];
  round: number;
  signal: AbortSignal;
  onRetry: (text: string) => AgentEvent;
}): AsyncGenerator<AgentEvent, RewrittenAnswer, undefined> {
  const messages: ChatMessage[] = [
    { role: 'system', content: rewriteSystemPrompt },
    {
      role: 'user',
      content: rewriteUserMessage(options.question, options.oldAnswer, options.executions),
    },
  ];
  const turn = yield* readModelTurn({
    model: options.model,
    messages,
    stop: ['</Answer>'],
    round: options.round,
    signal: options.signal,
    onRetry: (chunk) =>
      options.onRetry(
        `The model request failed (${chunk.reason}); retry ${chunk.retry} in ${chunk.delayMs} ms.`,
      ),
  });
  const answerStep = turn.steps.find((step) => step.kind === 'answer');
  const answer = answerStep?.text ?? turn.text.trim();
  return { answer, turn, messages };
}
