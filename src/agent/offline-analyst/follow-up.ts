import type { DataEntry } from '../first-message.ts';
import type { ChatMessage } from '../language-model.ts';
import { focusCell } from './cells/focus-cell.ts';
import { newFilesCell, newFilesCellHeader } from './cells/new-files-cell.ts';
import { askUnansweredReply } from '../model-notes.ts';
import { tablesCell } from './cells/tables-cell.ts';
import { matchInstructionColumns, nameableColumns, normalizeName } from './column-match.ts';
import { readFindings, unwrapExecute, type LaterQuestion, type WorkspaceGain } from './conversation.ts';
import { asksAboutAllTables, namedTables } from './table-match.ts';
import { inventoryWorkspace } from './workspace-inventory.ts';

/**
 * Follow-up questions in a thread. The offline analyst has no language model,
 * so it answers a follow-up only as far as rules can, and says so: a question
 * that names columns gets the focused breakdown of those columns (one cell, in
 * the kernel that already holds the loaded tables), then an answer quoting
 * what that cell printed; a question that names a table gets a cell that
 * describes it as the kernel holds it (rows, and the column names a later
 * question can use: the profile's may differ), then an answer quoting that;
 * a question about the data as a whole ("Describe the data") gets that
 * description of every table. Any other question is not answered: the
 * analyst asks back (`<Ask>`, the turn ends `asked`) which column or table is
 * meant, listing those a question can name, and the reply is the next
 * follow-up. Where nobody can reply (a one-shot run answers an <Ask> with a
 * fixed note), it takes the question to be about the data as a whole and
 * says so. When the workspace gained, changed or lost files since the last
 * answer (the thread's note says which), a first cell loads them into the
 * kernel beside the earlier tables (`new-files-cell.ts`), and the answer
 * says what it loaded.
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

function listNames(names: readonly string[], limit = 12): string {
  const shown = names.slice(0, limit).map((name) => `\`${name.replace(/`/g, "'").replace(/\s+/g, ' ')}\``);
  return `${shown.join(', ')}${names.length > limit ? ` and ${names.length - limit} more` : ''}`;
}

/** Column names as the data has them, for normalized names (`unitprice` → `unit_price`). */
function originalNames(normalized: readonly string[], entries: readonly DataEntry[]): string {
  const names = new Map(columnNames(entries).map((name) => [normalizeName(name), name]));
  return normalized.map((name) => `\`${(names.get(name) ?? name).replace(/`/g, "'")}\``).join(', ');
}

interface Quoting {
  understand: string;
  /** The line above the quoted findings. */
  intro: string;
  /** What the answer says when the cell failed or printed no findings. */
  nothing: (failed: boolean) => string;
  closing?: string;
}

/** What the cell that loaded the workspace's new files printed, quoted before the answer proper (none when it did not run). */
function loadedText(loaded: ChatMessage | undefined): string[] {
  if (loaded === undefined) return [];
  const findings = readFindings(unwrapExecute(loaded.content));
  return findings.length === 0
    ? [
        'The workspace changed since the last answer; loading its new files printed nothing (its output is in the report).',
      ]
    : [
        'The workspace changed since the last answer; its new files, as this conversation loaded them:',
        findings.map((finding) => `- ${finding}`).join('\n'),
      ];
}

/** The answer after a follow-up's cell: the findings it printed, quoted verbatim, so every number is an output's. */
function quotingAnswer(
  result: ChatMessage | undefined,
  quoting: Quoting,
  loaded: ChatMessage | undefined,
): string {
  const text = result === undefined ? '' : unwrapExecute(result.content);
  const findings = readFindings(text);
  const failed = /Traceback \(most recent call last\)|^\w+Error\b/m.test(text);
  const body = [disclaimer, ...loadedText(loaded)];
  if (failed || findings.length === 0) body.push(quoting.nothing(failed));
  else {
    body.push(quoting.intro, findings.map((finding) => `- ${finding}`).join('\n'));
    if (quoting.closing !== undefined) body.push(quoting.closing);
  }
  return `<Understand>\n${quoting.understand}\n</Understand>\n<Answer>\n${body.join('\n\n')}\n</Answer>`;
}

const isResult = (message: ChatMessage) => message.role === 'execute' || message.role === 'user';

/** The cell that loads the files a changed workspace gained, and a line on those it cannot load. */
function newFilesTurn(gain: WorkspaceGain): string {
  const inventory = inventoryWorkspace(gain.load, 0);
  const notLoaded = [
    ...inventory.unread.map((file) =>
      file.reason === 'more files than the tolerant reader tries'
        ? { file: file.file, reason: 'its profile found no table in it' }
        : file,
    ),
  ];
  const names = listNames([...gain.load.map((entry) => entry.name), ...gain.removed]);
  return (
    `<Analyze>\nThe workspace changed since the last answer (${names}): the kernel holds the tables of the files as they were, so the new and changed files are loaded beside them (and removed ones forgotten) before the question.\n</Analyze>\n` +
    `<Code>\n\`\`\`python\n${newFilesCell(inventory.sources, gain.removed, notLoaded)}\n\`\`\`\n</Code>`
  );
}

/**
 * The next turn of a follow-up, as tag-protocol text. `gain`: what the
 * workspace gained or lost since the last answer, loaded by a first cell.
 */
export function followUpTurn(
  followUp: LaterQuestion,
  entries: readonly DataEntry[],
  gain: WorkspaceGain | null = null,
): string {
  const first = followUp.after.find((message) => message.role === 'assistant');
  const loadRan = first !== undefined && first.content.includes(newFilesCellHeader);
  if (gain !== null && !loadRan) return newFilesTurn(gain);
  // After the loading cell (and its result), the follow-up proper.
  let after = followUp.after;
  let loaded: ChatMessage | undefined;
  if (loadRan) {
    const at = after.indexOf(first);
    const resultAt = after.findIndex((message, index) => index > at && isResult(message));
    loaded = resultAt === -1 ? undefined : after[resultAt];
    after = resultAt === -1 ? [] : after.slice(resultAt + 1);
  }
  const columns = matchInstructionColumns(followUp.question, entries);
  const named = originalNames(columns, entries);
  const result = after.find(isResult);
  const ranCell = after.some((message) => message.role === 'assistant');
  if (columns.length > 0 && !ranCell) {
    return (
      `<Analyze>\nThe question names columns of the data (${named}, compared without case, spaces or underscores): a focused breakdown of those, on the tables loaded earlier in this conversation.\n</Analyze>\n` +
      `<Code>\n\`\`\`python\n${focusCell(columns)}\n\`\`\`\n</Code>`
    );
  }
  if (columns.length > 0) {
    return quotingAnswer(
      result,
      {
        understand: 'The breakdown ran; the answer quotes what it printed.',
        intro: `About ${named}, as the breakdown printed it:`,
        nothing: (failed) =>
          `The breakdown of ${named} ${failed ? 'failed' : 'printed no findings'}; its output is in the report. A question that needs judgement needs a language model (see \`datalyst chat --help\`).`,
      },
      loaded,
    );
  }
  const tables = namedTables(followUp.question, entries);
  const names = listNames(
    tables.map((table) => (table.table === null ? table.file : `${table.file} [${table.table}]`)),
  );
  if (tables.length > 0 && !ranCell) {
    return (
      `<Analyze>\nThe question names ${names}: what the kernel of this conversation holds of ${tables.length === 1 ? 'it' : 'them'}, and which column names a follow-up can use.\n</Analyze>\n` +
      `<Code>\n\`\`\`python\n${tablesCell(tables, nameableColumns(entries))}\n\`\`\`\n</Code>`
    );
  }
  if (tables.length > 0) {
    return quotingAnswer(
      result,
      {
        understand: 'The description ran; the answer quotes what it printed.',
        intro: `The question names ${names}; as the kernel of this conversation holds ${tables.length === 1 ? 'it' : 'them'}:`,
        nothing: (failed) =>
          `The description of the ${tables.length === 1 ? 'table' : 'tables'} the question names ${failed ? 'failed' : 'printed nothing'}; its output is in the report.`,
        closing: 'Ask about one of the columns a follow-up can name for a breakdown of it.',
      },
      loaded,
    );
  }
  const everyTable = asksAboutAllTables(followUp.question);
  // Nobody could say which column or table was meant: the loop's note says to assume and say so.
  const assumed = !everyTable && followUp.question.trim() === askUnansweredReply;
  if ((everyTable || assumed) && !ranCell) {
    return (
      `<Analyze>\n${assumed ? 'Nobody can say which column or table the question is about, so it is taken to be about the data as a whole' : 'The question asks about the data as a whole'}: ` +
      `every table as the kernel of this conversation holds it, and which column names a follow-up can use.\n</Analyze>\n` +
      `<Code>\n\`\`\`python\n${tablesCell('all', nameableColumns(entries))}\n\`\`\`\n</Code>`
    );
  }
  if (everyTable || assumed) {
    return quotingAnswer(
      result,
      {
        understand: 'The description ran; the answer quotes what it printed.',
        intro: assumed
          ? 'The question named no column or table, and nobody could say which was meant, so this answer assumes it is about the data as a whole and does not answer anything more specific. Every table, as the kernel of this conversation holds it:'
          : 'Every table, as the kernel of this conversation holds it:',
        nothing: (failed) =>
          `The description of the tables ${failed ? 'failed' : 'printed nothing'}; its output is in the report.`,
        closing: 'Ask about one of the columns a follow-up can name for a breakdown of it.',
      },
      loaded,
    );
  }
  return askWhichNames(entries);
}

/**
 * The question names no column or table the analyst knows: rather than an
 * answer that answers nothing, it asks which one is meant (the turn ends
 * `asked`; the reply is read as the next follow-up).
 */
function askWhichNames(entries: readonly DataEntry[]): string {
  // Only names a question can use: not `Unnamed: 1` (the kernel calls it `column_2`), not "GF" (too short to match).
  const nameable = new Set(nameableColumns(entries));
  const known = columnNames(entries).filter((name) => nameable.has(normalizeName(name)));
  const files = entries.filter((entry) => (entry.tables ?? []).length > 0).map((entry) => entry.name);
  const lists = [
    known.length > 0 ? `Columns: ${listNames(known)}.` : null,
    files.length > 0 ? `Files: ${listNames(files)}.` : null,
  ].filter((line) => line !== null);
  return (
    `<Analyze>\nThe question names no column or table of the data, and the offline analyst answers a follow-up only about those it finds named: it asks which is meant.\n</Analyze>\n` +
    `<Ask>\nWhich column or table is this question about? Datalyst's built-in offline analyst (rules, no language model) answers a follow-up only about the columns or tables it names, and this one names none.\n\n` +
    (lists.length > 0 ? `${lists.join('\n')}\n\n` : '') +
    'Reply with the names you mean (one or more columns, or a file), or "describe the data" for every table. ' +
    'A question that needs judgement needs a language model (`--model`).\n</Ask>'
  );
}
