import type { ChatMessage } from './language-model.ts';

export const modelProfileNames = ['deepanalyze', 'chat'] as const;
export type ModelProfileName = (typeof modelProfileNames)[number];

/**
 * How the loop talks to one family of models. The loop is the same for all;
 * only these settings differ.
 */
export interface ModelProfile {
  name: ModelProfileName;
  /** Sent first, before the `# Instruction` message; null for none. */
  systemPrompt: string | null;
  /** The role of the message that carries execution results. */
  executeRole: 'execute' | 'user';
  /** Wrap results in `<Execute>…</Execute>` (chat models), or send them bare (DeepAnalyze's template adds the tags). */
  wrapExecute: boolean;
  /** Generation stops here; the model client re-appends the tag. */
  stop: readonly string[];
}

const protocolStops = ['</Code>', '</Answer>', '</Ask>'] as const;

/**
 * DeepAnalyze-8B served by vLLM: trained without a system prompt, on results
 * in messages of role `execute` holding the bare output (as DeepAnalyze's own
 * client sends them).
 */
export const deepAnalyzeProfile: ModelProfile = {
  name: 'deepanalyze',
  systemPrompt: null,
  executeRole: 'execute',
  wrapExecute: false,
  stop: protocolStops,
};

/**
 * Request fields DeepAnalyze's own vLLM client sends with every request
 * (`add_generation_prompt: false`, so its chat template adds no assistant
 * header of its own). Pass them as `extraBody` of the model client when
 * serving DeepAnalyze-8B with vLLM. Taken from that client; not checked
 * against a running model here.
 */
/**
 * DeepAnalyze's own API server samples at temperature 0.4 unless the request
 * sets one; the model was tuned with that default. The `deepanalyze` profile
 * sends it when no temperature is set.
 */
export const deepAnalyzeTemperature = 0.4;

export const deepAnalyzeExtraBody: Readonly<Record<string, unknown>> = Object.freeze({
  add_generation_prompt: false,
});

export const chatSystemPrompt = `You are a data analyst working in a Jupyter-like Python sandbox. The files of the workspace are in the current working directory; the first message lists them with a profile of each (columns, types, sample values and the pandas call that loads it).

Answer in tags, one step at a time:
- <Analyze>your plan and reasoning</Analyze>
- <Understand>what the last results tell you</Understand>
- <Code>Python to run</Code> — it runs in a persistent kernel (variables survive between cells); matplotlib figures are captured automatically. Write one <Code> block per reply, then stop: the system runs it and answers with <Execute>the output</Execute>. Never write <Execute> yourself.
- <Answer>your final answer, in Markdown</Answer> — once the results support it. Use only numbers that the outputs showed.
- <Ask>a question for the user</Ask> — only when the data cannot settle something you need to know (which column is meant, which period), instead of guessing; then stop and wait for the reply. If the reply says nobody can answer, make a reasonable assumption, state it, and go on.

The conversation can go on after your answer: the user may ask follow-up questions. The kernel keeps its variables, so build on what earlier cells loaded and computed.

Example:
<Analyze>I will load the sales table and compare the mean revenue by region.</Analyze>
<Code>
\`\`\`python
import pandas as pd
sales = pd.read_csv('sales.csv')
print(sales.groupby('region')['revenue'].mean())
\`\`\`
</Code>
(the system replies with <Execute>…</Execute>; later:)
<Answer>The North region has the highest mean revenue (1 234.5).</Answer>`;

/** General chat models (OpenAI, Ollama, LM Studio, …): a system prompt that teaches the tags; results as a `user` message. */
export const chatProfile: ModelProfile = {
  name: 'chat',
  systemPrompt: chatSystemPrompt,
  executeRole: 'user',
  wrapExecute: true,
  stop: protocolStops,
};

export function resolveModelProfile(profile: ModelProfile | ModelProfileName | undefined): ModelProfile {
  if (profile === undefined || profile === 'chat') return chatProfile;
  if (profile === 'deepanalyze') return deepAnalyzeProfile;
  return profile;
}

/** The messages that carry one reply's execution results back to the model. */
export function executeMessages(profile: ModelProfile, executeTexts: readonly string[]): ChatMessage[] {
  if (executeTexts.length === 0) return [];
  if (!profile.wrapExecute) return executeTexts.map((content) => ({ role: profile.executeRole, content }));
  return [
    {
      role: profile.executeRole,
      content: executeTexts.map((text) => `<Execute>\n${text}\n</Execute>`).join('\n'),
    },
  ];
}
