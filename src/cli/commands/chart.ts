import path from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import { ConfigError } from '../../errors/index.ts';
import type { ChartPool } from '../../report/chart-pool.ts';
import type { CliContext } from '../cli-context.ts';
import { ExitCode, exitCodeForError, exitCodeHelpFor } from '../exit-codes.ts';
import { handleInterrupts } from '../interrupt.ts';
import type { ExitCodeSink } from '../program.ts';
import { printError } from '../program.ts';
import { displayPath } from '../output-dir.ts';
import { colorEnabled, createTerminalStyle } from '../terminal-style.ts';

const chartHelp = `
Draws vega-lite (or vega) specs headless, without a browser for SVG and PNG,
in the same worker processes and limits as a report's charts: each chart has
30 s and 512 MB. Data past --max-rows rows is cut, with a note; a chart
that summarizes its rows (a sum, a count, a histogram, a density) is not
drawn from the first rows but refused, naming --max-rows. Nothing is
fetched: a spec with data.url is refused, use --data. A data file is parsed
(CSV, TSV, JSON by its extension), never run, and replaces each spec's
top-level data.
PDF is printed by headless Chromium (DATALYST_CHROMIUM, default /usr/bin/chromium).

-o names a file for one spec (its extension gives the format) or a folder
(one <spec name>.<format> per spec; created if missing).

Examples:
  $ datalyst chart sales.vl.json -o sales.svg
  $ datalyst chart charts/*.vl.json --format png -o out/
  $ datalyst chart bars.vl.json --data q2.csv -o q2-bars.pdf

${exitCodeHelpFor([
  [ExitCode.answered, 'every chart was drawn'],
  [ExitCode.internal, 'internal error (a bug in Datalyst)'],
  [ExitCode.usage, 'a bad option, a spec or data file that cannot be read, a chart that cannot be drawn'],
  [ExitCode.sandboxUnavailable, 'Chromium, which prints PDF, is missing or did not start'],
  [ExitCode.cancelled, 'cancelled (Ctrl-C)'],
])}`;

const chartOptionsSchema = z.object({
  out: z.string(),
  data: z.string().optional(),
  format: z.enum(['svg', 'png', 'pdf']).optional(),
  maxRows: z.coerce.number().int().positive().optional(),
  quiet: z.boolean().optional(),
});
type ChartCommandOptions = z.infer<typeof chartOptionsSchema>;

export function defineChartCommand(program: Command, context: CliContext, setExitCode: ExitCodeSink): void {
  program
    .command('chart')
    .description('Draw vega-lite specs to SVG, PNG or PDF.')
    .argument('<specs...>', 'vega-lite spec files (*.vl.json)')
    .requiredOption('-o, --out <file|dir>', 'output file (one spec) or folder')
    .option('--data <file>', 'a .csv, .tsv or .json file whose rows replace each spec’s data')
    .option('--format <format>', 'svg, png or pdf (default: the extension of -o, else svg)')
    .option('--max-rows <n>', 'rows kept per dataset (default 5000)')
    .option('--quiet', 'print only errors')
    .addHelpText('after', chartHelp)
    .action(async (specs: string[], rawOptions: unknown) => {
      setExitCode(await runChart(context, specs, rawOptions));
    });
}

async function runChart(context: CliContext, specs: string[], rawOptions: unknown): Promise<number> {
  const style = createTerminalStyle(colorEnabled(context.stderr.isTTY, context.env));
  const interrupts = handleInterrupts({
    source: context.signals,
    onFirst: () => context.stderr.write('Stopping… press Ctrl-C again to quit at once.\n'),
    onSecond: () => context.exit(ExitCode.cancelled),
  });
  let pool: ChartPool | null = null;
  try {
    const parsed = chartOptionsSchema.safeParse(rawOptions);
    if (!parsed.success)
      throw new ConfigError(
        `Invalid option: ${parsed.error.issues[0]?.path.join('.') ?? ''} ${parsed.error.issues[0]?.message ?? ''}`,
        'See `datalyst chart --help`: --format is svg, png or pdf; --max-rows a positive whole number.',
      );
    const options: ChartCommandOptions = parsed.data;
    // The chart workers start first (about half a second each, most of a small batch's time), while
    // the rest of the report module loads and the spec files are read.
    const { ChartPool } = await import('../../report/chart-pool.ts');
    pool = new ChartPool();
    pool.warm(specs.length);
    // Only what draws charts to files: not the report's renderers (markdown-it, highlight.js), nor playwright unless printing PDF.
    const { renderChartFiles } = await import('../../report/chart-files.ts');
    const resolve = (file: string): string => path.resolve(context.cwd, file);
    // Relative to where the user is, unless that climbs out of it ("../../tmp/x.svg" for /tmp/x.svg).
    const shown = (file: string): string => displayPath(file, context.cwd);
    const started = performance.now();
    const results = await renderChartFiles({
      specPaths: specs.map(resolve),
      out: resolve(options.out),
      ...(options.data === undefined ? {} : { dataPath: resolve(options.data) }),
      ...(options.format === undefined ? {} : { format: options.format }),
      ...(options.maxRows === undefined ? {} : { maxRows: options.maxRows }),
      launchPdfPrinter: async () =>
        (await import('../../report/pdf.ts')).PdfPrinter.launch(
          context.env.chromium === undefined ? {} : { executablePath: context.env.chromium },
        ),
      chartPool: pool,
      signal: interrupts.signal,
      onChart: (result) => {
        if (result.error !== null)
          context.stderr.write(`${style.red('✗')} ${shown(result.specPath)}: ${result.error}\n`);
        else if (options.quiet !== true)
          context.stdout.write(`${style.green('✓')} ${shown(result.outPath ?? '')}\n`);
        for (const note of result.notes) context.stderr.write(`  ${style.yellow('note:')} ${note}\n`);
      },
    });
    const failed = results.filter((result) => result.error !== null).length;
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    if (options.quiet !== true || failed > 0)
      (failed > 0 ? context.stderr : context.stdout).write(
        `${results.length - failed} of ${results.length} chart${results.length === 1 ? '' : 's'} drawn in ${seconds} s${failed > 0 ? `; ${failed} failed` : ''}.\n`,
      );
    // A spec that does not draw is the input's fault, as a bad argument is.
    return failed > 0 ? ExitCode.usage : ExitCode.answered;
  } catch (error) {
    printError(context, error);
    return exitCodeForError(error);
  } finally {
    interrupts.dispose();
    await pool?.close();
  }
}
