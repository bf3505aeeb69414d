/**
 * The offline analyst's plan: a fixed order of steps, each run at most once
 * (the load steps at most twice, after the kernel lost its state). Which step
 * comes next is read back from the analyst's own earlier turns: every cell
 * starts with the header line below.
 */
export const stageOrder = [
  'setup',
  'prepare',
  'registry',
  'load',
  'load-fallback',
  'relations',
  'overview',
  'distributions',
  'categories',
  'time',
  'correlations',
  'outliers',
  'focus',
] as const;

export type Stage = (typeof stageOrder)[number];

export function isStage(text: string): text is Stage {
  return (stageOrder as readonly string[]).includes(text);
}

const headerPrefix = '# offline-analyst step: ';

/** The first line of every cell: names the step, so the next turn knows where the plan stands. */
export function stageHeader(stage: Stage): string {
  return `${headerPrefix}${stage}`;
}

/** The step a cell belongs to, from its header line; null for code the analyst did not write. */
export function stageOfCode(code: string): Stage | null {
  const match = /^# offline-analyst step: ([a-z-]+)\s*$/m.exec(code);
  const name = match?.[1];
  return name !== undefined && isStage(name) ? name : null;
}
