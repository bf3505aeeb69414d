import path from 'node:path';
import { ConfigError } from '../errors/index.ts';
import type { RenderedReport } from '../index.ts';
import { displayPath } from './output-dir.ts';
import type { ProgressRenderer } from './progress-renderer.ts';

/** The file named as "the report", in this order: `--format md` alone wrote its figures (assets/*.png) first. */
const MAIN_REPORT_FILES = ['report.html', 'report.pdf', 'report.md', 'analysis.ipynb', 'trace.json'];

/** The closing lines after a report is written: where it is, and what the reader should know about it. */
export function describeRenderedReport(
  renderer: ProgressRenderer,
  files: readonly string[],
  rendered: Pick<RenderedReport, 'grounding' | 'charts'> & Partial<Pick<RenderedReport, 'conversation'>>,
  cwd: string,
): void {
  const { charts } = rendered;
  // A conversation's total: its last answer alone read as if it were the whole session.
  const conversation = rendered.conversation ?? null;
  const grounding = conversation?.grounding ?? rendered.grounding;
  const where =
    conversation === null
      ? 'the answer'
      : conversation.answers === 1
        ? "the conversation's answer"
        : `the conversation's ${conversation.answers} answers`;
  if (grounding.checked > 0) {
    renderer.info(
      `Numbers in ${where}: ${grounding.verified} of ${grounding.checked} found in the execution outputs.`,
    );
  }
  if (charts.failed > 0) {
    renderer.warn(
      `${charts.failed} chart${charts.failed === 1 ? '' : 's'} could not be rendered (shown as an error box in the report).`,
    );
  }
  const main =
    MAIN_REPORT_FILES.map((name) => files.find((file) => path.basename(file) === name)).find(Boolean) ??
    files[0];
  if (main === undefined) return;
  renderer.result(`Report: ${displayPath(main, cwd)}`);
  const others = files.filter((file) => file !== main && path.dirname(file) === path.dirname(main));
  if (others.length > 0) renderer.info(`  also: ${others.map((file) => path.basename(file)).join(', ')}`);
}

/** A failure to write the report folder is the user's to fix (path, permissions, disk). */
export function mapWriteFailure(error: unknown): unknown {
  const code = typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
  if (code === 'EACCES' || code === 'ENOSPC' || code === 'EROFS' || code === 'ENOTDIR') {
    return new ConfigError(
      `The report could not be written (${String(code)}).`,
      'Pass a writable folder with --out, or free disk space.',
      error,
    );
  }
  return error;
}
