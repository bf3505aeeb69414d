import { z } from 'zod';
import { CancelledError } from '../errors/index.ts';
import { formatFirstMessage, type ChatMessage, type LanguageModel } from '../agent/index.ts';
import { DeepRoleError } from './deep-role-error.ts';
import type { DeepRoles, EvidenceDraft, OutlineDraft, RoleContext, SubQuestionDraft } from './deep-roles.ts';
import type { Brief, EvidenceItem } from './deep-schema.ts';
import {
  compressQuestion,
  planSystemPrompt,
  repairMessage,
  scopeSystemPrompt,
  superviseSystemPrompt,
  writeSystemPrompt,
} from './model-prompts.ts';

/**
 * The deep analysis's roles played by a language model: each role is one
 * request (prompts in `model-prompts.ts`), its reply a JSON object inside
 * `<Answer>` (the writer's: markdown) read with zod. A reply that does not
 * parse gets one repair request saying what was wrong; a second failure is a
 * `DeepRoleError` naming the role. Sub-analysts are the ordinary tag loop
 * with the same model; compress asks the sub-analyst's own thread.
 */

const tableList = z.array(z.string()).default([]);
const subQuestionDraftSchema = z.object({ question: z.string().min(1), tables: tableList });

const scopeReplySchema = z.union([
  z.object({ ask: z.string().min(1) }),
  z.object({
    questions: z.array(subQuestionDraftSchema).min(1),
    goodAnswer: z.string().default(''),
  }),
]);
const superviseReplySchema = z.object({ subQuestions: z.array(subQuestionDraftSchema).min(1) });
const compressReplySchema = z.object({
  evidence: z.array(
    z.object({
      claim: z.string().min(1),
      outputs: z.array(z.string()).default([]),
      figures: z.array(z.string()).default([]),
    }),
  ),
});
const planReplySchema = z.object({
  sections: z
    .array(
      z.object({
        title: z.string().min(1),
        purpose: z.string().default(''),
        evidenceIds: z.array(z.string()).default([]),
      }),
    )
    .min(1),
  gaps: z.array(subQuestionDraftSchema).default([]),
});
const writeReplySchema = z.string().trim().min(1, 'the section is empty');

/** The text inside the last `<Answer>` (unclosed at the end counts), or the whole text when there is none. */
export function answerText(reply: string): string {
  const start = reply.lastIndexOf('<Answer>');
  if (start === -1) return reply.trim();
  const body = reply.slice(start + '<Answer>'.length);
  const end = body.indexOf('</Answer>');
  return (end === -1 ? body : body.slice(0, end)).trim();
}

/** Reads a JSON reply: the `<Answer>` body, a ```json fence in it when there is one, else the outermost braces. */
export function parseJsonReply<Schema extends z.ZodType>(
  reply: string,
  schema: Schema,
): { ok: true; value: z.infer<Schema> } | { ok: false; problem: string } {
  const body = answerText(reply);
  const fenced = /```(?:json)?\s*\n?([\s\S]*?)```/.exec(body);
  let text = fenced?.[1] ?? body;
  if (fenced === undefined || fenced === null) {
    const first = text.indexOf('{');
    const last = text.lastIndexOf('}');
    if (first === -1 || last < first) return { ok: false, problem: 'no JSON object was found' };
    text = text.slice(first, last + 1);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { ok: false, problem: `the JSON does not parse (${(error as Error).message})` };
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success)
    return {
      ok: false,
      problem: `the JSON does not match (${z.prettifyError(parsed.error).replaceAll('\n', ' ')})`,
    };
  return { ok: true, value: parsed.data };
}

/** One model request, its streamed text collected (a retried request starts the text over). */
async function complete(
  model: LanguageModel,
  messages: readonly ChatMessage[],
  context: RoleContext,
): Promise<string> {
  let text = '';
  for await (const chunk of model.stream({ messages, stop: [], signal: context.signal })) {
    if (chunk.type === 'text-delta') text += chunk.text;
    else if (chunk.type === 'usage')
      context.onUsage({ promptTokens: chunk.promptTokens, completionTokens: chunk.completionTokens });
    else if (chunk.type === 'retry' && chunk.discardText) text = '';
  }
  if (context.signal.aborted) throw new CancelledError(context.signal.reason);
  return text;
}

/** Asks, reads, repairs once, then fails with the role's name. */
async function askRole<Value>(
  role: string,
  model: LanguageModel,
  messages: ChatMessage[],
  read: (reply: string) => { ok: true; value: Value } | { ok: false; problem: string },
  context: RoleContext,
): Promise<Value> {
  const conversation = [...messages];
  let problem = '';
  for (let attempt = 0; attempt < 2; attempt += 1) {
    let reply: string;
    try {
      reply = await complete(model, conversation, context);
    } catch (error) {
      if (error instanceof CancelledError || context.signal.aborted) throw error;
      throw new DeepRoleError(role, (error as Error).message, error);
    }
    const read_ = read(reply);
    if (read_.ok) return read_.value;
    problem = read_.problem;
    conversation.push(
      { role: 'assistant', content: reply },
      { role: 'user', content: repairMessage(problem) },
    );
  }
  throw new DeepRoleError(role, `the reply could not be read after one repair: ${problem}`);
}

const evidenceText = (items: readonly EvidenceItem[]) =>
  items.length === 0
    ? '(no evidence)'
    : items
        .map(
          (item) =>
            `${item.id} (from ${item.subAnalysisId}; outputs ${item.outputs.join(', ') || 'none'}${item.figures.length > 0 ? `; figures ${item.figures.join(', ')}` : ''}): ${item.claim}`,
        )
        .join('\n');

const briefText = (brief: Brief) =>
  [
    `Instruction: ${brief.question}`,
    'Questions:',
    ...brief.questions.map(
      (question, index) =>
        `${index + 1}. ${question.question} (tables: ${question.tables.join(', ') || 'any'})`,
    ),
    `A good answer: ${brief.goodAnswer}`,
  ].join('\n');

export interface ModelDeepRolesOptions {
  /** The model of each sub-analyst. Default the roles' model. */
  subAnalystModel?: LanguageModel;
}

/** The roles of a deep analysis, played by `model`. */
export function createModelDeepRoles(model: LanguageModel, options: ModelDeepRolesOptions = {}): DeepRoles {
  return {
    modelId: model.id,
    offline: model.offline === true,

    async scope(input, context) {
      const reply = await askRole(
        'scope',
        model,
        [
          { role: 'system', content: scopeSystemPrompt(input.mayAsk) },
          { role: 'user', content: formatFirstMessage(input.question, input.profile) },
        ],
        (text) => {
          const parsed = parseJsonReply(text, scopeReplySchema);
          if (parsed.ok && 'ask' in parsed.value && !input.mayAsk)
            return { ok: false, problem: 'nobody can answer a question now; write the brief' };
          return parsed;
        },
        context,
      );
      if ('ask' in reply) return { ask: reply.ask };
      return {
        brief: { question: input.question, questions: reply.questions, goodAnswer: reply.goodAnswer },
      };
    },

    async supervise(input, context) {
      const reply = await askRole(
        'supervise',
        model,
        [
          { role: 'system', content: superviseSystemPrompt(input.maxSubAnalyses) },
          {
            role: 'user',
            content: `${briefText(input.brief)}\n\n${formatFirstMessage(input.brief.question, input.profile).replace(/^# Instruction\n[\s\S]*?\n\n# Data/, '# Data')}`,
          },
        ],
        (text) => parseJsonReply(text, superviseReplySchema),
        context,
      );
      return reply.subQuestions.slice(0, input.maxSubAnalyses) satisfies SubQuestionDraft[];
    },

    subAnalystModel() {
      return options.subAnalystModel ?? model;
    },

    async compress(input, context) {
      // The sub-analyst's own thread: it has its outputs in context. One repair, as the other roles.
      let question = compressQuestion;
      let problem = '';
      for (let attempt = 0; attempt < 2; attempt += 1) {
        const result = await input.askFollowUp(question);
        context.onUsage(result.usage);
        if (context.signal.aborted) throw new CancelledError(context.signal.reason);
        if (result.answer === null) {
          problem = `it ended ${result.termination.reason} without an answer (${result.termination.detail})`;
        } else {
          const parsed = parseJsonReply(result.answer, compressReplySchema);
          if (parsed.ok) return parsed.value.evidence satisfies EvidenceDraft[];
          problem = parsed.problem;
        }
        question = repairMessage(problem);
      }
      throw new DeepRoleError(
        'compress',
        `the sub-analyst's findings could not be read after one repair: ${problem}`,
      );
    },

    async plan(input, context) {
      const finalRound = input.round >= input.maxRounds;
      const reply = await askRole(
        'plan',
        model,
        [
          { role: 'system', content: planSystemPrompt(finalRound) },
          {
            role: 'user',
            content: `${briefText(input.brief)}\n\nEvidence bank:\n${evidenceText(input.evidence)}\n\nPlanning round ${input.round} of ${input.maxRounds}.`,
          },
        ],
        (text) => parseJsonReply(text, planReplySchema),
        context,
      );
      return { sections: reply.sections, gaps: finalRound ? [] : reply.gaps } satisfies OutlineDraft;
    },

    async write(input, context) {
      return askRole(
        'write',
        model,
        [
          { role: 'system', content: writeSystemPrompt },
          {
            role: 'user',
            content: [
              `The report answers: ${input.brief.question}`,
              `A good answer: ${input.brief.goodAnswer}`,
              `Section: ${input.section.title}`,
              `It must say: ${input.section.purpose}`,
              `Evidence (cite as [EV…]):\n${evidenceText(input.evidence)}`,
            ].join('\n\n'),
          },
        ],
        (text) => {
          const parsed = writeReplySchema.safeParse(answerText(text));
          return parsed.success
            ? { ok: true, value: parsed.data }
            : { ok: false, problem: 'the section is empty' };
        },
        context,
      );
    },
  };
}
