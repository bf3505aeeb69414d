import type { CellResult } from '../sandbox/cell-result.ts';
import { formatCellOutput } from '../sandbox/index.ts';
import { clipText } from './clip-text.ts';

export interface ExecuteTextOptions {
  /** Characters of cell output the model sees; the middle of longer output is cut. Default 12 000. */
  maxChars: number;
  /** Files named at most in the note about produced files. Default 20. */
  maxNamedFiles: number;
}

export const defaultExecuteTextOptions: ExecuteTextOptions = { maxChars: 12_000, maxNamedFiles: 20 };

// A file's path as named to the model: the cell chose it, so it can be very long.
const maxNamedPathChars = 200;

/**
 * Keeps the head and the tail of a long text with a marker in the middle: the
 * head shows what the code started doing, the tail the result or the error
 * that ended it. Cuts at line breaks when one is near.
 */
export function capMiddle(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const markerReserve = 80;
  const budget = Math.max(0, maxChars - markerReserve);
  let headEnd = Math.floor(budget * 0.6);
  let tailStart = text.length - (budget - headEnd);
  const headBreak = text.lastIndexOf('\n', headEnd);
  if (headBreak > headEnd * 0.8) headEnd = headBreak + 1;
  const tailBreak = text.indexOf('\n', tailStart);
  if (tailBreak !== -1 && tailBreak < tailStart + (text.length - tailStart) * 0.2) tailStart = tailBreak + 1;
  const omitted = tailStart - headEnd;
  return `${text.slice(0, headEnd)}\n[… ${omitted} characters of output omitted …]\n${text.slice(tailStart)}`;
}

function formatSize(sizeBytes: number): string {
  if (sizeBytes < 1024) return `${sizeBytes} B`;
  if (sizeBytes < 1024 * 1024) return `${(sizeBytes / 1024).toFixed(1)} KB`;
  return `${(sizeBytes / 1024 / 1024).toFixed(1)} MB`;
}

/** A line naming what the cell produced besides text, or null when it produced nothing else. */
export function describeProducts(result: CellResult, maxNamedFiles: number): string | null {
  const parts: string[] = [];
  if (result.figures.length > 0) {
    parts.push(
      `${result.figures.length} figure${result.figures.length === 1 ? '' : 's'} captured for the report`,
    );
  }
  if (result.charts.length > 0) {
    parts.push(
      `${result.charts.length} chart${result.charts.length === 1 ? '' : 's'} captured for the report`,
    );
  }
  if (result.files.length > 0) {
    const named = result.files
      .slice(0, maxNamedFiles)
      .map(
        (file) => `${clipText(file.path, maxNamedPathChars)} (${file.change}, ${formatSize(file.sizeBytes)})`,
      );
    const more = result.files.length - named.length;
    parts.push(`files written: ${named.join(', ')}${more > 0 ? ` and ${more} more` : ''}`);
  }
  if (result.stateLost)
    parts.push('the kernel was restarted: variables and imports are gone, re-run what you need');
  return parts.length === 0 ? null : `[${parts.join('; ')}]`;
}

/**
 * The <Execute> text the model sees for one cell: the sandbox's
 * `formatCellOutput` (DeepAnalyze's layout), capped with head and tail kept,
 * and a line naming the figures and files the cell produced. Every part is
 * bounded: the output by `maxChars`, the line by `maxNamedFiles` paths of at
 * most 200 characters each.
 */
export function formatExecuteText(
  result: CellResult,
  options: ExecuteTextOptions = defaultExecuteTextOptions,
): string {
  const output = capMiddle(formatCellOutput(result), options.maxChars);
  const products = describeProducts(result, options.maxNamedFiles);
  if (products === null) return output;
  return output.length === 0 ? products : `${output}\n${products}`;
}
