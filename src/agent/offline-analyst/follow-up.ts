import type { DataEntry } from '../first-message.ts';
import { focusCell } from './cells/focus-cell.ts';
import { matchInstructionColumns, normalizeName } from './column-match.ts';
import { readFindings, unwrapExecute, type LaterQuestion } from './conversation.ts';

/**
 * Follow-up questions in a thread. The offline analyst has no language model,
 * so it answers a follow-up only as far as rules can, and says so: a question
 * that names columns gets the focused breakdown of those columns (one cell, in
 * the kernel that already holds the loaded tables), then an answer quoting
 * what that cell printed; a question that names a table gets its shape from
 * the workspace profile; any other question gets an honest "cannot answer".
 */

const disclaimer =
  "**No language model was used.** This answer comes from Datalyst's built-in offline analyst (rules, no language model).";

function columnNames(entries: readonly DataEntry[]): string[] {
  return [
    ...new Set(
      entries.flatMap((entry) =>
        (entry.tables ?? []).flatMap((table) => table.columns.map((column) => column.name)),
      ),
    ),
  ];
}

/** Tables the question names by file name (without extension) or sheet/table name. */
function namedTables(
  question: string,
  entries: readonly DataEntry[],
): { entry: DataEntry; table: NonNullable<DataEntry['tables']>[number] }[] {
  const words = new Set(
    question
      .toLowerCase()
      .split(/[^\p{L}\p{N}_.-]+/u)
      .flatMap((word) => [normalizeName(word), normalizeName(word.replace(/\.[a-z0-9]+$/, ''))])
      .filter((word) => word.length >= 3),
  );
  const found: { entry: DataEntry; table: NonNullable<DataEntry['tables']>[number] }[] = [];
  for (const entry of entries) {
    const stem = normalizeName(entry.name.replace(/\.[^.]+$/, ''));
    for (const table of entry.tables ?? []) {
      if (words.has(stem) || (table.name !== '' && words.has(normalizeName(table.name))))
        found.push({ entry, table });
    }
  }
  return found.slice(0, 4);
}

function listNames(names: readonly string[], limit = 12): string {
  const shown = names.slice(0, limit).map((name) => `\`${name.replace(/`/g, "'")}\``);
  return `${shown.join(', ')}${names.length > limit ? ` and ${names.length - limit} more` : ''}`;
}

/** Column names as the data has them, for normalized names (`unitprice` → `unit_price`). */
function originalNames(normalized: readonly string[], entries: readonly DataEntry[]): string {
  const names = new Map(columnNames(entries).map((name) => [normalizeName(name), name]));
  return normalized.map((name) => `\`${(names.get(name) ?? name).replace(/`/g, "'")}\``).join(', ');
}

/** The next turn of a follow-up, as tag-protocol text. */
export function followUpTurn(followUp: LaterQuestion, entries: readonly DataEntry[]): string {
  const columns = matchInstructionColumns(followUp.question, entries);
  const named = originalNames(columns, entries);
  const result = followUp.after.find((message) => message.role === 'execute' || message.role === 'user');
  const ranCell = followUp.after.some((message) => message.role === 'assistant');
  if (columns.length > 0 && !ranCell) {
    return (
      `<Analyze>\nThe question names columns of the data (${named}, compared without case, spaces or underscores): a focused breakdown of those, on the tables loaded earlier in this conversation.\n</Analyze>\n` +
      `<Code>\n\`\`\`python\n${focusCell(columns)}\n\`\`\`\n</Code>`
    );
  }
  if (columns.length > 0) {
    const text = result === undefined ? '' : unwrapExecute(result.content);
    const findings = readFindings(text);
    const failed = /Traceback \(most recent call last\)|^\w+Error\b/m.test(text);
    const body = [disclaimer];
    if (failed || findings.length === 0) {
      body.push(
        `The breakdown of ${named} ${failed ? 'failed' : 'printed no findings'}; its output is in the report. A question that needs judgement needs a language model (see \`datalyst chat --help\`).`,
      );
    } else {
      body.push(
        `About ${named}, as the breakdown printed it:`,
        findings.map((finding) => `- ${finding}`).join('\n'),
      );
    }
    return `<Understand>\nThe breakdown ran; the answer quotes what it printed.\n</Understand>\n<Answer>\n${body.join('\n\n')}\n</Answer>`;
  }
  const tables = namedTables(followUp.question, entries);
  if (tables.length > 0) {
    const lines = tables.map(({ entry, table }) => {
      const name = table.name === '' ? `\`${entry.name}\`` : `\`${entry.name}\` (${table.name})`;
      const more = table.more_columns === undefined ? 0 : table.more_columns;
      return `- ${name}: ${table.rows} rows, ${table.columns.length + more} columns: ${listNames(table.columns.map((column) => column.name))}.`;
    });
    return (
      `<Answer>\n${disclaimer}\n\nThe question names ${tables.length === 1 ? 'a table' : 'tables'} of the workspace; what its profile says:\n\n${lines.join('\n')}\n\n` +
      'Ask about one of these columns by name for a breakdown of it.\n</Answer>'
    );
  }
  const known = columnNames(entries);
  return (
    `<Answer>\n${disclaimer} It can answer a follow-up only about columns or tables it finds named in the question, ` +
    `and this question names none of them, so it cannot answer it.\n\n` +
    (known.length > 0
      ? `The columns of the data are ${listNames(known)}. Ask about one of them by name, `
      : 'Ask about a column by name, ') +
    'or run Datalyst with a language model (`--model`) for questions that need judgement.\n</Answer>'
  );
}
