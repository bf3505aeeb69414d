import type { PreparedReport } from './prepared-report.ts';

/**
 * What "Figures and tables" says when it has nothing to show, the same in
 * report.html and report.md. "Other" only when key charts were shown above
 * (the HTML said "no other figures, charts or tables" when there were none at
 * all, the Markdown "no figures or charts"); tables are named only when the
 * run printed none anywhere (those it did print are in the process).
 */
export function emptyGalleryNote(report: PreparedReport, keyVisualsShown: number): string {
  const runHasTables = report.view.executions.some((execution) => execution.result.tables.length > 0);
  if (keyVisualsShown > 0)
    return `The run produced no figures or charts other than the key charts above${runHasTables ? '' : ', and no tables'}.`;
  return runHasTables
    ? 'The run produced no figures or charts.'
    : 'The run produced no figures, charts or tables.';
}
