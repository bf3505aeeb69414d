import { matchInstructionColumns } from './column-match.ts';
import type { ExecutedStep, OfflineConversation, StepFacts } from './conversation.ts';
import { stageOrder } from './stages.ts';
import type { Stage } from './stages.ts';
import { inventoryWorkspace } from './workspace-inventory.ts';
import type { FallbackTarget } from './cells/load-fallback-cell.ts';

/**
 * The next turn, decided from the conversation alone. The plan is a fixed
 * order of steps; each is taken at most once, skipped when the facts say it
 * has nothing to work on, and the loading steps are repeated once if the
 * kernel lost its state. So the number of cells is bounded by the plan's
 * length (plus one reload), and the analyst can never loop.
 */
export type NextTurn =
  | { kind: 'cell'; stage: Stage; fallbackTargets: FallbackTarget[]; focusColumns: string[] }
  | { kind: 'answer'; reason: AnswerReason };

export type AnswerReason = 'complete' | 'finish-requested' | 'cell-limit' | 'setup-failed' | 'state-lost';

export interface PlanLimits {
  maxCells: number;
  maxFallbackFiles: number;
}

const loadingStages: ReadonlySet<Stage> = new Set([
  'setup',
  'prepare',
  'registry',
  'load',
  'load-fallback',
  'relations',
]);

/** The workspace facts of the latest loading step that printed them. */
export function latestWorkspaceFacts(steps: readonly ExecutedStep[]): StepFacts | null {
  for (const step of [...steps].reverse()) {
    if (step.stage !== null && loadingStages.has(step.stage) && step.facts?.focus !== undefined)
      return step.facts;
  }
  return null;
}

function kindCount(facts: StepFacts | null, ...kinds: string[]): number | null {
  if (facts?.kinds === undefined) return null; // unknown: let the cell find out
  return kinds.reduce((sum, kind) => sum + (facts.kinds?.[kind] ?? 0), 0);
}

export function fallbackTargetsOf(conversation: OfflineConversation, limits: PlanLimits): FallbackTarget[] {
  const targets = inventoryWorkspace(conversation.entries, limits.maxFallbackFiles).fallback;
  const loadStep = [...conversation.steps].reverse().find((step) => step.stage === 'load');
  for (const [file, table] of loadStep?.facts?.failed ?? []) {
    if (targets.length >= limits.maxFallbackFiles) break;
    targets.push({ file, table: table === '' ? null : table });
  }
  return targets;
}

function isApplicable(stage: Stage, conversation: OfflineConversation, limits: PlanLimits): boolean {
  const facts = latestWorkspaceFacts(conversation.steps);
  const atLeast = (count: number | null, minimum: number): boolean => count === null || count >= minimum;
  switch (stage) {
    case 'setup':
    case 'prepare':
    case 'registry':
    case 'load':
      return true;
    case 'load-fallback':
      return fallbackTargetsOf(conversation, limits).length > 0;
    case 'relations':
      return (facts?.unique ?? 0) >= 3;
    case 'overview':
      return facts === null || (facts.focus?.length ?? 0) > 0;
    case 'distributions':
    case 'outliers':
      return atLeast(kindCount(facts, 'number'), 1);
    case 'categories':
      return atLeast(kindCount(facts, 'category', 'boolean'), 1);
    case 'time':
      return atLeast(kindCount(facts, 'datetime'), 1);
    case 'correlations':
      return (
        atLeast(kindCount(facts, 'number', 'boolean'), 2) ||
        (atLeast(kindCount(facts, 'number'), 1) && atLeast(kindCount(facts, 'category'), 1))
      );
    case 'focus':
      return matchInstructionColumns(conversation.instruction, conversation.entries).length > 0;
  }
}

/** Stages that count as done. After the first loss of kernel state the loading steps run again, and the failed step once more. */
function doneStages(steps: readonly ExecutedStep[]): Set<Stage> {
  const lossIndexes = steps.flatMap((step, index) => (step.stateLost ? [index] : []));
  const firstLoss = lossIndexes[0];
  const done = new Set<Stage>();
  steps.forEach((step, index) => {
    if (step.stage === null) return;
    const recovering = firstLoss !== undefined && lossIndexes.length === 1;
    if (recovering && loadingStages.has(step.stage) && index < firstLoss) return;
    if (recovering && index === firstLoss) return;
    done.add(step.stage);
  });
  return done;
}

/** True once a cell found the kernel restarted (out of memory, a crash): the reload then takes less memory. */
export function kernelLost(steps: readonly ExecutedStep[]): boolean {
  return steps.some((step) => step.stateLost);
}

/** Rows kept per table after a restart: a quarter of the limit, at least 1 000. */
export function recoveryRows(maxRows: number): number {
  return Math.max(1000, Math.floor(maxRows / 4));
}

export function planNextTurn(conversation: OfflineConversation, limits: PlanLimits): NextTurn {
  const { steps } = conversation;
  if (conversation.finishRequested) return { kind: 'answer', reason: 'finish-requested' };
  // A second loss: the smaller reload did not help either. Stop rather than run cells on tables that are gone.
  if (steps.filter((step) => step.stateLost).length >= 2) return { kind: 'answer', reason: 'state-lost' };
  if (steps.length >= limits.maxCells) return { kind: 'answer', reason: 'cell-limit' };
  for (const stage of ['setup', 'prepare', 'registry'] as const) {
    const latest = [...steps].reverse().find((step) => step.stage === stage);
    if (latest?.errorName !== null && latest?.errorName !== undefined && !latest.stateLost) {
      return { kind: 'answer', reason: 'setup-failed' };
    }
  }
  const done = doneStages(steps);
  for (const stage of stageOrder) {
    if (done.has(stage) || !isApplicable(stage, conversation, limits)) continue;
    return {
      kind: 'cell',
      stage,
      fallbackTargets: stage === 'load-fallback' ? fallbackTargetsOf(conversation, limits) : [],
      focusColumns: matchInstructionColumns(conversation.instruction, conversation.entries),
    };
  }
  return { kind: 'answer', reason: 'complete' };
}
