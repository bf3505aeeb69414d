import type { DataEntry } from '../first-message.ts';

/**
 * Which columns does the instruction name? Words and short phrases of the
 * instruction are compared with column names ignoring case, spaces,
 * underscores and punctuation, and plural endings ("regions" names `region`,
 * "unit price" names `unit_price`). A word that names no column as a whole
 * may name a column by one of its parts ("discount" names `discount_pct`),
 * unless that part is too common (more than three columns share it). A file
 * name in the instruction names no column.
 */

/** Column names as the kernel compares them: lower case, letters and digits only. */
export function normalizeName(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');
}

function singular(word: string): string {
  if (word.length <= 3 || word.endsWith('ss')) return word;
  if (word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (/(?:ch|sh|x|ss)es$/.test(word)) return word.slice(0, -2);
  return word.endsWith('s') ? word.slice(0, -1) : word;
}

// Words that name no column in practice, only the task.
const ignoredWords = new Set([
  'the',
  'and',
  'for',
  'with',
  'what',
  'which',
  'how',
  'does',
  'did',
  'are',
  'was',
  'were',
  'that',
  'this',
  'these',
  'those',
  'from',
  'into',
  'about',
  'across',
  'between',
  'relate',
  'related',
  'relation',
  'drive',
  'drives',
  'data',
  'dataset',
  'file',
  'files',
  'table',
  'tables',
  'column',
  'columns',
  'row',
  'rows',
  'value',
  'values',
  'report',
  'analysis',
  'analyze',
  'analyse',
  'describe',
  'generate',
  'show',
  'find',
  'their',
  'there',
  'they',
  'them',
  'have',
  'has',
  'much',
  'many',
  'more',
  'most',
  'less',
  'than',
  'then',
  'over',
  'per',
  'each',
  'every',
  'any',
  'all',
  'not',
  'fit',
  'days',
  'day',
  'science',
  'summary',
  'overview',
  'pattern',
  'patterns',
  'trend',
  'trends',
  'clean',
  'contain',
  'contains',
  'why',
  'who',
  'when',
  'where',
  'should',
  'could',
  'would',
  'can',
  'will',
  'please',
]);

interface ColumnName {
  name: string;
  normalized: string;
  singular: string;
  parts: string[];
}

function describeColumn(name: string): ColumnName {
  const normalized = normalizeName(name);
  const parts = name
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((part) => part.length > 0)
    .map(singular);
  return { name, normalized, singular: singular(normalized), parts };
}

interface Vocabulary {
  columns: Map<string, ColumnName>;
  /** File names, longest first: a file's name in the text names no column. */
  fileNames: string[];
}

function vocabularyOf(entries: readonly DataEntry[]): Vocabulary {
  const columns = new Map<string, ColumnName>();
  for (const entry of entries) {
    for (const table of entry.tables ?? []) {
      for (const column of table.columns) {
        const described = describeColumn(column.name);
        if (described.normalized.length > 0 && !/^column\d+$/.test(described.normalized)) {
          columns.set(described.normalized, described);
        }
      }
    }
  }
  // A file's name names no column: "orders.csv" is not `order_id`, "longest_absense_from_school.csv" not `school`.
  const fileNames = entries
    .flatMap((entry) => [entry.name, entry.name.split('/').at(-1) ?? entry.name])
    .filter((name) => name.length > 0)
    .sort((a, b) => b.length - a.length);
  return { columns, fileNames };
}

function matchColumns(instruction: string, { columns, fileNames }: Vocabulary, limit: number): string[] {
  let text = instruction.toLowerCase();
  for (const name of fileNames) text = text.split(name.toLowerCase()).join(' ');
  const words = text.split(/[^\p{L}\p{N}]+/u).filter((word) => word.length > 0);
  const found: string[] = [];
  const add = (normalized: string): void => {
    if (!found.includes(normalized)) found.push(normalized);
  };
  for (let index = 0; index < words.length; index += 1) {
    // Longest phrase first: "unit price" should name `unit_price`, not `units` and `price`.
    let matchedLength = 0;
    for (let length = 3; length >= 1 && matchedLength === 0; length -= 1) {
      const phrase = words.slice(index, index + length);
      if (phrase.length < length) continue;
      if (length === 1 && (ignoredWords.has(phrase[0] ?? '') || (phrase[0] ?? '').length < 3)) continue;
      const joined = singular(phrase.join(''));
      const whole = [...columns.values()].filter((column) => column.singular === joined);
      whole.forEach((column) => add(column.normalized));
      if (whole.length > 0) matchedLength = length;
    }
    if (matchedLength > 0) {
      index += matchedLength - 1;
      continue;
    }
    const word = singular(words[index] ?? '');
    if (word.length < 4 || ignoredWords.has(words[index] ?? '')) continue;
    const byPart = [...columns.values()].filter((column) => column.parts.includes(word));
    if (byPart.length > 0 && byPart.length <= 3) byPart.forEach((column) => add(column.normalized));
  }
  return found.slice(0, limit);
}

/**
 * The normalized names of the columns the instruction names, in the order the
 * instruction names them, without repeats, at most `limit`.
 */
export function matchInstructionColumns(
  instruction: string,
  entries: readonly DataEntry[],
  limit = 8,
): string[] {
  return matchColumns(instruction, vocabularyOf(entries), limit);
}

/**
 * The normalized names of the profile's columns that a question can name:
 * the column's own name, written in a question, selects it. Not one whose
 * name is a word of the task ("value") or shorter than three characters
 * ("GF"), nor one whose name is too long to match as a phrase (three words at
 * most) and shares each of its words with more than three columns. Not pandas'
 * name for a header cell left empty (`Unnamed: 3`) either: the kernel calls
 * that column by its place (`column_4`), so the name is never found there.
 */
export function nameableColumns(entries: readonly DataEntry[]): string[] {
  const vocabulary = vocabularyOf(entries);
  return [...vocabulary.columns.values()]
    .filter(
      (column) =>
        !/^Unnamed: \d+/.test(column.name) &&
        matchColumns(column.name, vocabulary, Number.POSITIVE_INFINITY).includes(column.normalized),
    )
    .map((column) => column.normalized);
}
