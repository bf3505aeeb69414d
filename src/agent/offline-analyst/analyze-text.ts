import { normalizeName } from './column-match.ts';
import type { OfflineConversation } from './conversation.ts';
import { latestWorkspaceFacts } from './plan.ts';
import type { Stage } from './stages.ts';
import type { FallbackTarget } from './cells/load-fallback-cell.ts';
import type { WorkspaceInventory } from './workspace-inventory.ts';
import { plural } from '../../util/plural.ts';

/**
 * The <Analyze> text of a step: why this step, in the words a reader of the
 * report needs. It may mention counts from the profile; only the <Answer> is
 * held to quoting the outputs.
 */

function listNames(names: readonly string[], max = 5): string {
  const shown = names.slice(0, max).join(', ');
  return names.length > max ? `${shown} and ${names.length - max} more` : shown;
}

export interface AnalyzeContext {
  conversation: OfflineConversation;
  inventory: WorkspaceInventory;
  fallbackTargets: readonly FallbackTarget[];
  focusColumns: readonly string[];
}

/** The column names as the profile wrote them, for the normalized names the matcher returns. */
function originalNames(conversation: OfflineConversation, normalized: readonly string[]): string[] {
  const columns = conversation.entries.flatMap((entry) =>
    (entry.tables ?? []).flatMap((table) => table.columns),
  );
  return normalized.map(
    (name) => columns.find((column) => normalizeName(column.name) === name)?.name ?? name,
  );
}

function previousStepNote(conversation: OfflineConversation): string {
  const last = conversation.steps.at(-1);
  if (last === undefined) return '';
  if (last.stateLost) {
    return 'The previous step found the kernel without its variables (it was restarted, most likely out of memory), so the tables are loaded again first, with less memory: large files in smaller chunks, and smaller samples. ';
  }
  if (last.executeText === null) return 'The previous step returned no output. ';
  if (last.errorName !== null) {
    return `The previous step stopped with ${last.errorName}; what it printed before stays in the record, and the plan moves on. `;
  }
  return '';
}

function stageReason(stage: Stage, context: AnalyzeContext): string {
  const { conversation, inventory, fallbackTargets, focusColumns } = context;
  const facts = latestWorkspaceFacts(conversation.steps);
  const focus = facts?.focus ?? [];
  switch (stage) {
    case 'setup':
      return (
        "No language model takes part in this run: this is Datalyst's built-in offline analyst, a fixed, rule-based " +
        'plan (load, profile, distributions, relationships, outliers) that reads each result before choosing the next step. ' +
        `The workspace lists ${plural(conversation.entries.length, 'file')}. First, helpers every later step uses: one number ` +
        'format, so that the final summary can quote every figure exactly as it was printed, and a way to tell column kinds apart.'
      );
    case 'prepare':
      return (
        'Real files are often untidy: a title above the header, numbers stored as text with thousands separators, ' +
        'cells holding only spaces or a placeholder such as "." for missing. Define the tidy steps that every table ' +
        'goes through as it is loaded.'
      );
    case 'registry':
      return (
        'Keep the loaded tables in one place: note tables that repeat each other (the same data saved in two formats), ' +
        'catch a CSV read with the wrong delimiter or header, and pick the tables to study in depth.'
      );
    case 'load': {
      const files = [...new Set(inventory.sources.map((source) => source.file))];
      const parts = [
        `Load the ${plural(inventory.sources.length, 'table')} the profile found in ${plural(files.length, 'file')} ` +
          `(${listNames(files)}), each with the reader the profile chose (encoding, delimiter, header row, sheet).`,
      ];
      if (inventory.unread.length > 0) {
        parts.push(`Not read, and listed as such: ${listNames(inventory.unread.map((file) => file.file))}.`);
      }
      if (inventory.fallback.length > 0) {
        parts.push(
          `${listNames(inventory.fallback.map((target) => target.file))} get a tolerant reader in the next step.`,
        );
      }
      if (inventory.partlyListed.length > 0) {
        // Said as what happens: the profile found them all, but only those listed to the analyst are loaded.
        for (const { file, listed, unlisted } of inventory.partlyListed)
          parts.push(
            `Only the first ${listed} of the ${listed + unlisted} sheets or tables of ${listNames([file])} are loaded (the analysis lists at most ${listed} per file); the other ${unlisted} are not analysed.`,
          );
      }
      return parts.join(' ');
    }
    case 'load-fallback':
      return (
        `${listNames(fallbackTargets.map((target) => (target.table ? `${target.file} [${target.table}]` : target.file)))} ` +
        "could not be loaded with the profile's reader, or had no profile. Try a tolerant reader that guesses the " +
        'encoding, the delimiter and the header row itself, and reads every sheet or table.'
      );
    case 'relations':
      return (
        `${plural(facts?.unique ?? 0, 'distinct table')} are loaded. If one column links them (unique in one table, ` +
        'repeated in others, like a primary key and its foreign keys), joining them gives one row per entity, which says far ' +
        'more than each table alone.'
      );
    case 'overview':
      return (
        `Profile the ${focus.length === 1 ? 'table' : 'tables'} studied in depth (${listNames(focus)}): column kinds, ` +
        'missing values, ranges of numbers, the most common categories, and the span of dates.'
      );
    case 'distributions':
      return 'Histograms of the numeric columns show their shape; a strong skew decides whether the mean or the median is the fair summary.';
    case 'categories':
      return 'Bar charts of the most frequent values of the categorical columns, and the share of rows where each yes/no column holds.';
    case 'time':
      return 'There are date columns: plot the series over time and measure its trend, its weekday and yearly patterns, and the days that depart from their neighbours.';
    case 'correlations':
      return 'Relationships: correlations between numeric columns (a heatmap), and how much a numeric column differs between the groups of a categorical one.';
    case 'outliers':
      return 'Outliers by the IQR rule: values more than 1.5 interquartile ranges below the first or above the third quartile, per numeric column, with box plots.';
    case 'focus':
      return `The instruction names columns (${listNames(originalNames(conversation, focusColumns))}, compared without case, spaces or underscores): a focused breakdown of those.`;
  }
}

export function analyzeText(stage: Stage, context: AnalyzeContext): string {
  return previousStepNote(context.conversation) + stageReason(stage, context);
}
