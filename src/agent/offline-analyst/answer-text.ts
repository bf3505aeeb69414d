import type { OfflineConversation } from './conversation.ts';
import type { AnswerReason } from './plan.ts';
import type { Stage } from './stages.ts';

/**
 * The final turn. The Answer is built only from the `Findings:` lines the
 * cells printed, quoted verbatim, so every number in it occurs in an Execute
 * output; the connecting text carries no numbers of its own.
 */

// `share` scales the per-section cap: the data section describes every table studied.
const sections: ReadonlyArray<{ title: string; stages: readonly Stage[]; share?: number }> = [
  { title: 'What the instruction asks about', stages: ['focus'] },
  { title: 'The data', stages: ['load', 'load-fallback', 'relations', 'overview'], share: 5 },
  { title: 'Over time', stages: ['time'] },
  { title: 'Relationships', stages: ['correlations'] },
  { title: 'Distributions', stages: ['distributions'] },
  { title: 'Categories', stages: ['categories'] },
  { title: 'Outliers', stages: ['outliers'] },
];

const stageTitles: Readonly<Record<Stage, string>> = {
  setup: 'setup',
  prepare: 'tidy helpers',
  registry: 'table registry',
  load: 'loading',
  'load-fallback': 'tolerant reading',
  relations: 'joining tables',
  overview: 'overview',
  distributions: 'distributions',
  categories: 'categories',
  time: 'time series',
  correlations: 'relationships',
  outliers: 'outliers',
  focus: 'instruction breakdown',
};

export interface AnswerLimits {
  maxFindingsPerSection: number;
}

/** Error class names are quoted; one with digits in it would add an unprinted number, so it is left out. */
function errorLabel(errorName: string): string {
  return /\d/.test(errorName) ? 'an error' : `\`${errorName}\``;
}

function closingNotes(conversation: OfflineConversation, reason: AnswerReason): string[] {
  const notes: string[] = [];
  for (const step of conversation.steps) {
    if (step.stage === null) continue;
    const title = stageTitles[step.stage];
    if (step.executeText === null) notes.push(`The ${title} step returned no output.`);
    else if (step.stateLost)
      notes.push(`The ${title} step found the kernel restarted, without its variables.`);
    else if (step.errorName !== null) {
      notes.push(
        `The ${title} step stopped with ${errorLabel(step.errorName)}; its findings are incomplete.`,
      );
    }
  }
  if (reason === 'finish-requested')
    notes.push('The run asked for the answer before the plan was complete, so later steps did not run.');
  if (reason === 'cell-limit')
    notes.push('The analyst reached its limit of cells before the plan was complete.');
  if (reason === 'state-lost')
    notes.push(
      'The kernel lost its state again after the reload with less memory, so the analysis stopped here rather than run steps on tables that were gone; the findings above are all there is.',
    );
  if (reason === 'setup-failed')
    notes.push('The first steps failed, so the data could not be analysed; see their output.');
  return notes;
}

export function answerTurn(
  conversation: OfflineConversation,
  reason: AnswerReason,
  limits: AnswerLimits,
): string {
  const body: string[] = [
    "**No language model was used.** This summary comes from Datalyst's built-in offline analyst: a fixed, " +
      'rule-based exploratory analysis that reads each result and decides the next step. Every finding below is ' +
      'quoted from the output of the step that printed it; the charts are in the report.',
  ];
  let findingCount = 0;
  // A finding two steps printed alike (a table's one category, in the overview and in the categories) is written once.
  const written = new Set<string>();
  for (const section of sections) {
    const findings = conversation.steps
      .filter((step) => step.stage !== null && section.stages.includes(step.stage))
      .flatMap((step) => step.findings)
      .filter((finding) => !written.has(finding));
    const unique = [...new Set(findings)].slice(0, limits.maxFindingsPerSection * (section.share ?? 1));
    for (const finding of unique) written.add(finding);
    if (unique.length === 0) continue;
    findingCount += unique.length;
    body.push(`## ${section.title}`, unique.map((finding) => `- ${finding}`).join('\n'));
  }
  const notes = closingNotes(conversation, reason);
  if (findingCount === 0) body.push('The steps printed no findings, so there is nothing to summarise.');
  body.push(
    '## How to read this',
    [
      ...notes.map((note) => `- ${note}`),
      '- This is a description of the data, not an explanation: correlations and group differences are not causes.',
      '- For a question that needs judgement, run Datalyst with a language model (see `datalyst analyze --help`).',
    ].join('\n'),
  );
  const ran = conversation.steps.length;
  const failed = conversation.steps.filter(
    (step) => step.errorName !== null || step.executeText === null,
  ).length;
  const understand =
    `The plan is ${reason === 'complete' ? 'complete' : 'stopped early'}: ${ran} steps ran` +
    (failed > 0 ? `, ${failed} of them with an error` : '') +
    `, and ${findingCount} findings were printed. The answer collects them, quoted as printed.`;
  return `<Understand>\n${understand}\n</Understand>\n<Answer>\n${body.join('\n\n')}\n</Answer>`;
}
