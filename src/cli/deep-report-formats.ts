import path from 'node:path';
import type { DeepReportFormat } from '../index.ts';
import { ConfigError } from '../errors/index.ts';
import { displayPath } from './output-dir.ts';

/** The formats of `--format` a deep report has, and what to tell the person of the others. */
export interface DeepReportFormatChoice {
  formats: DeepReportFormat[];
  /** Names the formats asked for that a deep report has not (pdf), or null. */
  warning: string | null;
}

/**
 * Sorts `--format` for a deep analysis (`analyze --deep`, `report <deep run>`)
 * before anything runs or is written. Asking only for formats a deep report
 * has not (pdf) is refused: rendering the others instead rewrote files nobody
 * asked for and printed no PDF. The hint names a sub-analysis's folder (an
 * ordinary run, which has a PDF) from where the person is.
 */
export async function chooseDeepReportFormats(
  formats: readonly string[],
  runDir: string,
  cwd: string,
): Promise<DeepReportFormatChoice> {
  const { allDeepReportFormats, isDeepReportFormat } = await import('../report/index.ts');
  const kept = formats.filter(isDeepReportFormat);
  const others = formats.filter((format) => !isDeepReportFormat(format));
  if (others.length === 0) return { formats: kept, warning: null };
  const has = `it has ${allDeepReportFormats.join(', ')}`;
  const subAnalysis = `Each sub-analysis in sub/ is an ordinary run folder: \`datalyst report ${displayPath(path.join(runDir, 'sub', 'S1'), cwd)} --format ${others.join(',')}\` writes it for one.`;
  if (kept.length === 0)
    throw new ConfigError(
      `A deep analysis has no ${others.join(', ')} report (${has}); nothing was written.`,
      `Ask for one of those with --format, e.g. --format html. ${subAnalysis}`,
    );
  return {
    formats: kept,
    warning: `A deep analysis has no ${others.join(', ')} report (${has}). ${subAnalysis}`,
  };
}
