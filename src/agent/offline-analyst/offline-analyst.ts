import { CancelledError } from '../../errors/index.ts';
import type { LanguageModel, ModelChunk, ModelRequest } from '../language-model.ts';
import { analyzeText } from './analyze-text.ts';
import { answerTurn } from './answer-text.ts';
import { categoriesCell } from './cells/categories-cell.ts';
import { correlationsCell } from './cells/correlations-cell.ts';
import { distributionsCell } from './cells/distributions-cell.ts';
import { focusCell } from './cells/focus-cell.ts';
import { loadCell } from './cells/load-cell.ts';
import { loadFallbackCell } from './cells/load-fallback-cell.ts';
import { outliersCell } from './cells/outliers-cell.ts';
import { overviewCell } from './cells/overview-cell.ts';
import { prepareCell } from './cells/prepare-cell.ts';
import { registryCell } from './cells/registry-cell.ts';
import { relationsCell } from './cells/relations-cell.ts';
import { setupCell } from './cells/setup-cell.ts';
import { timeCell } from './cells/time-cell.ts';
import {
  currentEntries,
  readConversation,
  readLaterQuestion,
  workspaceGainSinceAnswer,
} from './conversation.ts';
import { followUpTurn } from './follow-up.ts';
import type { DataEntry } from '../first-message.ts';
import type { OfflineConversation } from './conversation.ts';
import { focusEntries } from './focus-tables.ts';
import { kernelLost, planNextTurn, recoveryRows } from './plan.ts';
import type { NextTurn } from './plan.ts';
import { inventoryWorkspace, profileErrors, readingNotes } from './workspace-inventory.ts';

export const OFFLINE_ANALYST_ID = 'datalyst-offline-analyst';

/** Limits of the offline analyst. Every field has a default; none is read from the environment. */
export interface OfflineAnalystOptions {
  /** Tables studied in depth (profiles, charts, correlations, outliers). Default 4. */
  maxFocusTables?: number;
  /** Columns charted per table and chart. Default 6. */
  maxColumnsPerChart?: number;
  /** Rows kept per table; a larger table is studied on a fixed random sample. Default 200 000. */
  maxRows?: number;
  /** CSV files larger than this are read in chunks (every row counted, a random sample kept). Default 32 MiB. */
  largeFileBytes?: number;
  /** Cells at most; then it answers whatever happened. Default 16, so a run takes at most 17 turns. */
  maxCells?: number;
  /** Files without a profiled table that the tolerant reader tries. Default 10. */
  maxFallbackFiles?: number;
  /** Findings quoted per section of the answer (twice as many for the data section). Default 10. */
  maxFindingsPerSection?: number;
  /** Characters per streamed text delta. Default 64. */
  chunkChars?: number;
  /**
   * Study only these tables (a deep analysis's sub-analyst): file names, or
   * `file#table` for one sheet or SQLite table. Default none: every table.
   */
  focusTables?: readonly string[];
  /**
   * The text whose words may name columns (a breakdown of those is the focus step). Default: the
   * question asked. A deep analysis's sub-analyst gets the user's instruction: its sub-question is
   * written from a template that names tables and says "values" and "categories", not columns.
   */
  columnWords?: string;
}

type ResolvedOptions = Required<Omit<OfflineAnalystOptions, 'focusTables' | 'columnWords'>>;

const defaults: ResolvedOptions = {
  maxFocusTables: 4,
  maxColumnsPerChart: 6,
  maxRows: 200_000,
  largeFileBytes: 32 * 1024 * 1024,
  maxCells: 16,
  maxFallbackFiles: 10,
  maxFindingsPerSection: 10,
  chunkChars: 64,
};

function cellCode(
  turn: Extract<NextTurn, { kind: 'cell' }>,
  conversation: OfflineConversation,
  workspaceEntries: readonly DataEntry[],
  options: ResolvedOptions,
): string {
  const inventory = inventoryWorkspace(conversation.entries, options.maxFallbackFiles);
  const recovering = kernelLost(conversation.steps);
  switch (turn.stage) {
    case 'setup':
      return setupCell();
    case 'prepare':
      return prepareCell(recovering ? recoveryRows(options.maxRows) : options.maxRows, recovering);
    case 'registry':
      return registryCell(options.maxFocusTables);
    case 'load':
      return loadCell(inventory.sources, inventory.unread, readingNotes(conversation.entries), {
        largeFileBytes: recovering ? options.largeFileBytes / 8 : options.largeFileBytes,
        // A sub-analyst studies some of the listed files: the others are not "past the listing limit".
        listedFiles: workspaceEntries.map((entry) => entry.name),
        studiedFiles: conversation.entries.map((entry) => entry.name),
        profileErrors: profileErrors(workspaceEntries),
      });
    case 'load-fallback':
      return loadFallbackCell(turn.fallbackTargets);
    case 'relations':
      return relationsCell();
    case 'overview':
      return overviewCell();
    case 'distributions':
      return distributionsCell(options.maxColumnsPerChart);
    case 'categories':
      return categoriesCell(options.maxColumnsPerChart);
    case 'time':
      return timeCell(turn.focusColumns);
    case 'correlations':
      return correlationsCell();
    case 'outliers':
      return outliersCell(options.maxColumnsPerChart);
    case 'focus':
      return focusCell(turn.focusColumns);
  }
}

/** The whole next turn as tag-protocol text, decided from the messages alone. */
export function offlineAnalystTurn(
  request: Pick<ModelRequest, 'messages'>,
  options: OfflineAnalystOptions = {},
): string {
  const { focusTables = [], columnWords, ...limits } = options;
  const resolved: ResolvedOptions = { ...defaults, ...limits };
  const later = readLaterQuestion(request.messages);
  if (later?.followsAnswer === true) {
    // The files as the thread last told them (first message and notes on a changed workspace), and what came since the answer.
    const entries = focusEntries(currentEntries(request.messages), focusTables);
    return followUpTurn(later, entries, workspaceGainSinceAnswer(request.messages));
  }
  const read = readConversation(request.messages);
  const conversation = {
    ...read,
    entries: focusEntries(read.entries, focusTables),
    instruction: columnWords ?? read.instruction,
  };
  const turn = planNextTurn(conversation, resolved);
  if (turn.kind === 'answer') {
    return answerTurn(conversation, turn.reason, { maxFindingsPerSection: resolved.maxFindingsPerSection });
  }
  const analyze = analyzeText(turn.stage, {
    conversation,
    inventory: inventoryWorkspace(conversation.entries, resolved.maxFallbackFiles),
    fallbackTargets: turn.fallbackTargets,
    focusColumns: turn.focusColumns,
  });
  const code = cellCode(turn, conversation, read.entries, resolved);
  return `<Analyze>\n${analyze}\n</Analyze>\n<Code>\n\`\`\`python\n${code}\n\`\`\`\n</Code>`;
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted === true) throw new CancelledError(signal.reason);
}

/**
 * The built-in offline analyst: a deterministic, rule-based exploratory
 * analysis behind the `LanguageModel` interface, so it drives the same loop,
 * sandbox and reports as a real model. Each `stream()` call yields one turn:
 * an <Analyze> and a <Code> cell, or at the end <Understand> and <Answer>.
 * It reads the execution results (role `execute`, or `user` with <Execute>)
 * to decide the next cell; the same conversation always gives the same turn.
 * With `focusTables` it studies only those tables (a deep analysis's sub-analyst).
 * In a thread, a follow-up question gets a breakdown of the columns it names,
 * the tables it names (or, asked about the data as a whole, every table) as
 * the kernel holds them, or else a question back: which column or table is meant (follow-up.ts);
 * a question asked after the first was cancelled unanswered, or after a
 * first question that found no data once files came, gets the whole
 * analysis, as a first question would (conversation.ts); a follow-up after
 * files came loads them first.
 *
 * @example
 * const model = createOfflineAnalyst();
 * const result = await analyze({ workspaceDir: 'workspace-examples/sales', instruction, model });
 */
export function createOfflineAnalyst(options: OfflineAnalystOptions = {}): LanguageModel {
  const chunkChars = Math.max(1, options.chunkChars ?? defaults.chunkChars);
  return {
    id: OFFLINE_ANALYST_ID,
    offline: true,
    // No context window of its own; a large value keeps the loop from compacting its turns.
    contextWindowTokens: 1_000_000,
    async *stream(request: ModelRequest): AsyncIterable<ModelChunk> {
      throwIfAborted(request.signal);
      const text = offlineAnalystTurn(request, options);
      for (let offset = 0; offset < text.length; offset += chunkChars) {
        throwIfAborted(request.signal);
        yield { type: 'text-delta', text: text.slice(offset, offset + chunkChars) };
      }
      // No model ran, so no tokens were used.
      yield { type: 'usage', promptTokens: 0, completionTokens: 0 };
      yield { type: 'finish', reason: 'stop' };
    },
  };
}
