import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import type { AnalyzeSettings } from '../../config/index.ts';
import { CancelledError, ConfigError, DatalystError } from '../../errors/index.ts';
import type { DeepAnalysisResult, DeepEvent, DeepReportFormat, WarmPool } from '../../index.ts';
import type { CliContext } from '../cli-context.ts';
import { exitCodeForDeepTermination } from '../exit-codes.ts';
import { handleCommandInterrupts } from '../command-interrupts.ts';
import type { toJsonLine } from '../json-lines.ts';
import { checkOutDir, displayPath, prepareOutDir } from '../output-dir.ts';
import type { ProgressRenderer } from '../progress-renderer.ts';
import type { WorkspaceCheck } from '../workspace-check.ts';
import {
  preflightRun,
  reportFormatOf,
  runOptionsFor,
  sandboxLimitsFor,
  type AnalyzeCommandOptions,
} from './analyze.ts';
import { plural } from '../../util/plural.ts';

/** What `analyze` has settled before it hands a `--deep` run over. */
export interface DeepCommandInput {
  context: CliContext;
  settings: AnalyzeSettings;
  check: WorkspaceCheck;
  renderer: ProgressRenderer;
  options: AnalyzeCommandOptions;
  writeJson: ((line: Parameters<typeof toJsonLine>[0]) => void) | null;
  fail: (error: unknown) => number;
}

const positiveCount = (flag: string) =>
  z
    .string()
    .regex(/^\d+$/, `${flag} takes a whole number`)
    .transform(Number)
    .refine((value) => value >= 1 && value <= 64, `${flag} takes a number from 1 to 64`);

function countOption(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const parsed = positiveCount(flag).safeParse(value.trim());
  if (!parsed.success) {
    throw new ConfigError(
      `${flag} ${value}: ${parsed.error.issues[0]?.message ?? 'not a count'}.`,
      `Pass a whole number, e.g. ${flag} 4.`,
    );
  }
  return parsed.data;
}

/** One progress line per phase and per sub-analysis start and end. */
function describeEvent(renderer: ProgressRenderer, event: DeepEvent, cwd: string): void {
  switch (event.type) {
    case 'deep-start':
      renderer.info(
        `Deep analysis ${event.runId}: up to ${event.concurrency} sub-${event.concurrency === 1 ? 'analysis' : 'analyses'} at once`,
      );
      return;
    case 'profile-end':
      // The same lines as a single run's: each file that could not be read is a warning ("! broken.sqlite: could not be read (…)").
      renderer.handle(event);
      return;
    case 'phase-start': {
      const round = event.round > 0 ? ` (round ${event.round})` : '';
      const text: Record<typeof event.phase, string> = {
        profile: 'Profiling the workspace in the sandbox…',
        scope: 'Scope: writing the brief…',
        supervise: 'Supervisor: splitting the brief into sub-questions…',
        research: `Research${round}: running the sub-analyses…`,
        plan: `Planning the outline${round}…`,
        write: 'Writing the sections…',
      };
      renderer.info(text[event.phase]);
      return;
    }
    case 'sub-analysis-start': {
      const tables = event.subQuestion.tables.length > 0 ? ` [${event.subQuestion.tables.join(', ')}]` : '';
      renderer.info(`  ${event.subQuestion.id} started: ${event.subQuestion.question}${tables}`);
      return;
    }
    case 'sub-analysis-end': {
      const { record } = event;
      const line = `  ${record.id} ${record.outcome}: ${record.detail}`;
      if (record.outcome === 'failed') renderer.warn(line.trim());
      else renderer.info(line);
      return;
    }
    case 'evidence-added': {
      const unverified = event.items.reduce(
        (count, item) => count + item.numbers.filter((number) => !number.verified).length,
        0,
      );
      renderer.info(
        `  ${event.subAnalysisId}: ${plural(event.items.length, 'evidence item')}` +
          (unverified > 0 ? ` (${plural(unverified, 'number')} not found in the cited outputs)` : ''),
      );
      return;
    }
    case 'outline-end':
      renderer.info(
        `Outline: ${plural(event.outline.sections.length, 'section')}` +
          (event.gaps > 0 ? `; ${plural(event.gaps, 'gap')} sent to sub-analysts` : ''),
      );
      return;
    case 'section-end':
      if (event.section.error !== null)
        renderer.warn(`${event.section.id} ${event.section.title}: ${event.section.error}`);
      else renderer.info(`  ${event.section.id} written: ${event.section.title}`);
      return;
    case 'deep-notice':
      renderer.warn(event.text);
      return;
    case 'deep-end': {
      const { termination, recordPath, record } = event.result;
      renderer.info(`Ended ${termination.reason}: ${termination.detail}`);
      // What the report's first screen says could not be answered, said here too.
      for (const line of record.summary?.cannotAnswer ?? []) renderer.warn(`Could not answer: ${line}`);
      renderer.result(`Deep run record: ${displayPath(recordPath, cwd)}`);
      return;
    }
  }
}

/** `datalyst analyze --deep`: the deep run, its progress, its record, its exit code. */
export async function runDeepAnalyze(input: DeepCommandInput): Promise<number> {
  const { context, settings, check, renderer, options, writeJson, fail } = input;
  let maxSubAnalyses: number | undefined;
  let concurrency: number | undefined;
  try {
    maxSubAnalyses = countOption('--sub-analyses', options.subAnalyses);
    concurrency = countOption('--concurrency', options.concurrency);
  } catch (error) {
    return fail(error);
  }
  const [{ deepAnalyze }, { createModel }] = await Promise.all([
    import('../../deep/index.ts'),
    import('../model-factory.ts'),
  ]);
  // Known once the run folder is made: a second Ctrl-C then says where deep.json keeps what was found.
  let runFolder: string | null = null;
  const interrupts = handleCommandInterrupts(
    context,
    renderer,
    'stopping every sub-analysis and its container, then writing deep.json',
    () => {
      if (runFolder === null) return null;
      const shown = displayPath(runFolder, context.cwd);
      return `${displayPath(path.join(runFolder, 'deep.json'), context.cwd)} keeps what the run had recorded, with the evidence banked so far; \`datalyst report ${shown}\` writes its report.`;
    },
  );
  let pool: WarmPool | null = null;
  try {
    let result: DeepAnalysisResult;
    try {
      await checkOutDir(settings.outDir, settings.outDirIsDefault);
      const image = await preflightRun(context, settings, renderer, writeJson, interrupts.signal);
      const outDir = await prepareOutDir(settings.outDir, settings.outDirIsDefault);
      runFolder = outDir;
      const run = runOptionsFor(settings, context, image, check);
      // Kernels started ahead while the brief is written. A pool cannot leave folders out of the
      // workspace, so a run whose own output lies inside it opens its sessions one by one instead.
      if (
        context.createWarmPool !== undefined &&
        settings.sandbox === 'docker' &&
        check.excluded.length === 0
      ) {
        pool = await context.createWarmPool({
          size: Math.min(concurrency ?? os.availableParallelism(), maxSubAnalyses ?? 4),
          ...(image === undefined ? {} : { image }),
          runtime: settings.runtime,
          limits: sandboxLimitsFor(settings),
        });
      }
      result = await deepAnalyze({
        instruction: settings.instruction,
        workspaceDir: settings.workspaceDir,
        model: createModel(settings.model),
        ...run,
        ...(pool === null ? {} : { warmPool: pool }),
        outDir,
        signal: interrupts.signal,
        ...(maxSubAnalyses === undefined ? {} : { maxSubAnalyses }),
        ...(concurrency === undefined ? {} : { concurrency }),
        onEvent: (event) => {
          if (writeJson !== null) writeJson(event);
          else describeEvent(renderer, event, context.cwd);
        },
      });
    } catch (error) {
      if (interrupts.interrupted && !DatalystError.isInstance(error)) return fail(new CancelledError(error));
      return fail(error);
    }
    if (writeJson !== null) describeEvent(renderer, { type: 'deep-end', result }, context.cwd);
    // A cancelled run's report too: it says so from the title down and shows what was done before the cancel.
    try {
      await writeDeepReport(context, renderer, result.outDir, settings.formats, writeJson);
    } catch (error) {
      // deep.json and the sub-analyses are kept; `datalyst report <folder>` writes the report again.
      return fail(error);
    }
    return exitCodeForDeepTermination(result.termination.reason, result.record.sections.length, result.error);
  } finally {
    interrupts.dispose();
    await pool?.close();
  }
}

/** The deep run's report in the formats asked for (Chromium, for pdf, was checked before the run), charts drawn through one pool. */
async function writeDeepReport(
  context: CliContext,
  renderer: ProgressRenderer,
  runDir: string,
  formats: readonly DeepReportFormat[],
  writeJson: DeepCommandInput['writeJson'],
): Promise<void> {
  const [{ ChartPool }, { renderDeepRunFolder }, { describeRenderedReport }] = await Promise.all([
    import('../../report/chart-pool.ts'),
    import('../../report/index.ts'),
    import('../report-summary.ts'),
  ]);
  const charts = new ChartPool({ cache: true });
  try {
    // No signal: after a Ctrl-C the run's signal is aborted, and the cancelled run's report is still written.
    const rendered = await renderDeepRunFolder(runDir, {
      formats,
      chartPool: charts,
      ...(context.env.chromium === undefined ? {} : { chromiumPath: context.env.chromium }),
    });
    // As plain `analyze`: under --json, a script learns from this line where the report went.
    writeJson?.({
      type: 'report-end',
      outDir: runDir,
      files: rendered.files.map((file) => ({ format: reportFormatOf(file), path: file })),
    });
    describeRenderedReport(renderer, rendered.files, rendered, context.cwd);
  } finally {
    await charts.close();
  }
}
