import type { DataEntry } from '../first-message.ts';
import type { NamedTable } from './cells/tables-cell.ts';
import { normalizeName } from './column-match.ts';

/**
 * Which tables does a follow-up name? A word of the question names a file
 * (its name without the extension: every table of the file) or a sheet or
 * SQLite table, compared as column names are (case, spaces, underscores and
 * punctuation ignored).
 *
 * A name that is also a word people use for the data in general ("data",
 * "dataset", "table", "sheet", "report", "summary", …) counts only where the
 * question clearly means that table: written with its extension
 * (`data.csv`), in quotes or backticks ("the `data` sheet"), or next to a
 * word that says what it is ("sheet data", "the data table"). So "Describe
 * the data" names no table, even in a workbook with a sheet called `data`.
 */

/** Words that, as a name, need a clear reference before they name a table or file. */
const genericNames = new Set([
  'data',
  'dataset',
  'datasets',
  'database',
  'db',
  'table',
  'tables',
  'file',
  'files',
  'sheet',
  'sheets',
  'workbook',
  'spreadsheet',
  'report',
  'summary',
  'overview',
  'result',
  'results',
  'sample',
]);

/** Words that say a name next to them is a table or a file ("sheet data", "the data table"). */
const kindWords = new Set(['table', 'sheet', 'worksheet', 'tab', 'file']);

const quotes = new Set(['`', '"', "'", '“', '”', '‘', '’', '«', '»']);

interface QuestionWord {
  /** Lower case, as written (`data.csv`, `data`). */
  text: string;
  /** Written between quotes or backticks. */
  quoted: boolean;
  /** The words before and after it, lower case; '' at either end. */
  before: string;
  after: string;
}

function questionWords(question: string): QuestionWord[] {
  const matches = [...question.matchAll(/[\p{L}\p{N}_.-]+/gu)];
  return matches.map((match, index) => {
    const start = match.index;
    const end = start + match[0].length;
    // "data." at the end of a sentence is the word "data".
    const text = match[0].toLowerCase().replace(/[.-]+$/, '');
    return {
      text,
      quoted: quotes.has(question[start - 1] ?? '') && quotes.has(question[end] ?? ''),
      before: matches[index - 1]?.[0].toLowerCase() ?? '',
      after: matches[index + 1]?.[0].toLowerCase().replace(/[.-]+$/, '') ?? '',
    };
  });
}

function withoutExtension(name: string): string {
  return name.replace(/\.[^.]+$/, '');
}

/** True when `word` names `name` (a file stem or a table name) as the rule above says. */
function names(word: QuestionWord, name: string): boolean {
  const normalized = normalizeName(name);
  if (normalized.length < 3) return false;
  const written = normalizeName(word.text);
  const stem = normalizeName(withoutExtension(word.text));
  if (written !== normalized && stem !== normalized) return false;
  if (!genericNames.has(normalized)) return true;
  return (
    word.quoted ||
    // Written with an extension: `data.csv`, `data.xlsx`.
    (stem === normalized && written !== normalized) ||
    kindWords.has(word.before) ||
    kindWords.has(word.after)
  );
}

/**
 * Tables the question names by file name (without extension: every table of
 * the file, also one only the kernel's tolerant reader could read) or by
 * sheet/table name, at most four.
 */
export function namedTables(question: string, entries: readonly DataEntry[]): NamedTable[] {
  const words = questionWords(question);
  const found: NamedTable[] = [];
  for (const entry of entries) {
    if (words.some((word) => names(word, withoutExtension(entry.name)))) {
      found.push({ file: entry.name, table: null });
      continue;
    }
    for (const table of entry.tables ?? []) {
      if (table.name !== '' && words.some((word) => names(word, table.name)))
        found.push({ file: entry.name, table: table.name });
    }
  }
  return found.slice(0, 4);
}

// "describe", "summarize", "what is in": asking for a description, not for a judgement.
const describing =
  /\b(?:describe|description|summari[sz]e|summary|overview|outline|list)\b|\bwhat(?:'s|’s| is| are)? in\b|\bcontains?\b|\btell me about\b|\blooks? like\b/i;
// The data as a whole: every table, not one of them.
const wholeData =
  /\b(?:data|dataset|datasets|database|tables|files|sheets|workbooks?|spreadsheets?|workspace|everything)\b|\b(?:the|this|that) (?:table|file|sheet)\b/i;

/**
 * A question that asks for a description of the data as a whole ("Describe
 * the data", "summarize this dataset", "what is in the tables?"): a describing
 * word and a word for all of the data. Read only after no column and no table
 * was found named, so "describe the `data` sheet" is about that sheet.
 */
export function asksAboutAllTables(question: string): boolean {
  return describing.test(question) && wholeData.test(question);
}
