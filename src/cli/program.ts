import { Command, CommanderError } from 'commander';
import { DatalystError } from '../errors/index.ts';
import { VERSION } from '../version.ts';
import type { CliContext } from './cli-context.ts';
import { defineAnalyzeCommand } from './commands/analyze.ts';
import { defineChartCommand } from './commands/chart.ts';
import { defineChatCommand } from './commands/chat.ts';
import { defineDoctorCommand } from './commands/doctor.ts';
import { defineNotebookCommand } from './commands/notebook.ts';
import { defineReportCommand } from './commands/report.ts';
import { defineRerunCommand } from './commands/rerun.ts';
import { defineServeCommand } from './commands/serve.ts';
import { defineSetupCommand } from './commands/setup.ts';
import { ExitCode, exitCodeForError, exitCodeHelp } from './exit-codes.ts';
import { colorEnabled, createTerminalStyle } from './terminal-style.ts';

/** Records the exit code a command's action decided. */
export type ExitCodeSink = (code: number) => void;

const programHelp = `
Examples:
  $ datalyst setup                                   build the runner image (once)
  $ datalyst analyze workspace-examples/sales        offline analyst, report in runs/
  $ datalyst analyze data/ "Which method works better?" --model gpt-4o-mini
  $ datalyst chat workspace-examples/sales           ask questions, one after another
  $ datalyst analyze --continue runs/20250314-093015-sales "And by month?"
  $ datalyst report runs/20250314-093015-sales       render the report again
  $ datalyst rerun runs/20250314-093015-sales data/q2  the same cells on new data, numbers updated
  $ datalyst doctor                                  check Docker, the image and the model
  $ datalyst serve                                   HTTP API on 127.0.0.1:8200 (DeepAnalyze/OpenAI-compatible)

${exitCodeHelp}`;

/** The `datalyst` program with its commands; output and exit codes go through `context`. */
export function createProgram(context: CliContext, setExitCode: ExitCodeSink): Command {
  const style = createTerminalStyle(colorEnabled(context.stderr.isTTY, context.env));
  const program = new Command('datalyst')
    .description(
      'Analyse a folder of data files with a language model (or the built-in offline analyst) in a Docker sandbox, and write a report with charts.',
    )
    .version(VERSION, '-V, --version')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => context.stdout.write(text),
      writeErr: (text) => context.stderr.write(text),
      outputError: (text, write) => write(style.red(text)),
    })
    .showHelpAfterError('(add --help for usage)')
    .addHelpText('after', programHelp);
  defineAnalyzeCommand(program, context, setExitCode);
  defineChatCommand(program, context, setExitCode);
  defineReportCommand(program, context, setExitCode);
  defineRerunCommand(program, context, setExitCode);
  defineSetupCommand(program, context, setExitCode);
  defineDoctorCommand(program, context, setExitCode);
  defineChartCommand(program, context, setExitCode);
  defineNotebookCommand(program, context, setExitCode);
  defineServeCommand(program, context, setExitCode);
  return program;
}

/** Prints an error that ended a command, with its code and fix; a bug gets its stack. */
export function printError(context: CliContext, error: unknown): void {
  const style = createTerminalStyle(colorEnabled(context.stderr.isTTY, context.env));
  if (DatalystError.isInstance(error) && error.code === 'CANCELLED') {
    context.stderr.write(`${style.yellow(style.bold('■ Cancelled'))} before the run started.\n`);
    return;
  }
  if (DatalystError.isInstance(error)) {
    context.stderr.write(
      `${style.red(style.bold(`✗ ${error.code}`))} ${error.message}\n  ${style.bold('fix:')} ${error.fix}\n`,
    );
    return;
  }
  const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
  context.stderr.write(
    `${style.red(style.bold('✗ INTERNAL'))} ${error instanceof Error ? error.message : String(error)}\n  ${style.bold('fix:')} This is a bug in Datalyst; please report it with the lines below.\n${style.dim(detail)}\n`,
  );
}

/** Runs one command line (without `node` and the script) and returns the exit code. */
export async function runCli(argv: readonly string[], context: CliContext): Promise<number> {
  let exitCode: number = ExitCode.answered;
  const program = createProgram(context, (code) => {
    exitCode = code;
  });
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end with code 0; every parsing error is a usage error.
      return error.exitCode === 0 ? ExitCode.answered : ExitCode.usage;
    }
    printError(context, error);
    return exitCodeForError(error);
  }
}
