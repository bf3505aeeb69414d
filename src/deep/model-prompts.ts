/**
 * Every prompt of the model roles, in one place, so they can be read and
 * changed together. Each role is one request: a system message saying what
 * the role is and the exact reply format, and a user message with its input.
 * Replies are a JSON object inside `<Answer>…</Answer>` (the writer's is
 * markdown there instead); `model-roles.ts` parses them with zod.
 */

const jsonReply = (shape: string) =>
  `Reply with nothing but one JSON object inside <Answer></Answer>, of this shape:\n<Answer>\n${shape}\n</Answer>`;

export const scopeSystemPrompt = (mayAsk: boolean) =>
  [
    'You plan a data analysis. Read the instruction and the description of the data files, and write a research brief:',
    'the questions the report must answer (each with the workspace files or `file#sheet` tables it needs), and what a good answer contains.',
    'Keep the questions concrete and answerable from these files.',
    jsonReply(
      '{"questions": [{"question": "…", "tables": ["file.csv"]}], "goodAnswer": "what a good report contains"}',
    ),
    mayAsk
      ? 'If the instruction cannot be understood without the user, reply instead with <Answer>{"ask": "your question to the user"}</Answer>.'
      : 'Nobody can answer questions: make reasonable assumptions and state them in goodAnswer.',
  ].join('\n\n');

export const superviseSystemPrompt = (maxSubAnalyses: number) =>
  [
    `You lead a team of data analysts. Split the research brief into at most ${maxSubAnalyses} sub-questions, one per analyst.`,
    'Each analyst works alone in a Python session over the same files and sees only its own sub-question, so each must stand on its own: name the tables and what to compute.',
    'Sub-questions should not overlap.',
    jsonReply('{"subQuestions": [{"question": "…", "tables": ["file.csv"]}]}'),
  ].join('\n\n');

/** Asked in the sub-analyst's own thread, after its answer: it knows its outputs (`E1`, `E2`, …). */
export const compressQuestion = [
  'Now compress your findings into evidence for a report writer who will not see this conversation.',
  'List each finding as a claim of one or two sentences, with the numbers written out as the outputs printed them,',
  'the output ids (E1, E2, …) of the cells that printed what it rests on, and the figures or charts that show it (E3#figure0, E4#chart0).',
  'Only findings that your outputs support; do not write any more code.',
  jsonReply('{"evidence": [{"claim": "…", "outputs": ["E2"], "figures": []}]}'),
].join(' ');

export const planSystemPrompt = (finalRound: boolean) =>
  [
    'You outline a data analysis report. You get the research brief and the evidence bank: findings, each under an id (EV1, EV2, …).',
    'Write the sections of the report in order; each section cites the ids of the evidence it will rest on (only ids from the bank).',
    finalRound
      ? 'This outline is final: no more research can be done, so leave gaps empty.'
      : 'If something the brief needs is missing from the evidence, name it as a gap: a sub-question for one more analyst (at most two gaps).',
    jsonReply(
      '{"sections": [{"title": "…", "purpose": "what the section must say", "evidenceIds": ["EV1"]}], "gaps": [{"question": "…", "tables": ["file.csv"]}]}',
    ),
  ].join('\n\n');

export const writeSystemPrompt = [
  'You write one section of a data analysis report, in markdown, from the evidence given and nothing else.',
  'Cite the evidence each sentence rests on as [EV3]; state numbers exactly as the evidence does; do not invent numbers.',
  'No heading for the section itself (it has its title already).',
  'Reply with the markdown inside <Answer></Answer>.',
].join('\n\n');

/** Sent once when a reply could not be read; the second failure ends the role. */
export const repairMessage = (problem: string) =>
  `Your reply could not be read: ${problem}. Reply again, in exactly the format asked, inside <Answer></Answer>.`;
