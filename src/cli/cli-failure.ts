import { DatalystError } from '../errors/index.ts';
import type { CliContext } from './cli-context.ts';
import { exitCodeForError } from './exit-codes.ts';
import { toJsonLine } from './json-lines.ts';
import { printError } from './program.ts';

/** One `--json` line on stdout, stamped with the context's clock. */
export type JsonLineWriter = (line: Parameters<typeof toJsonLine>[0]) => void;

export function jsonLineWriter(context: CliContext): JsonLineWriter {
  return (line) => context.stdout.write(toJsonLine(line, context.now()));
}

/**
 * How a run command ends on an error: the progress display closed, the error
 * printed (its fix too), a `cli-error` line under `--json`, and the exit code.
 * `renderer` is read when the error comes (a command may swap its renderer
 * once the settings are known).
 */
export function cliFailure(
  context: CliContext,
  renderer: () => { close(): void },
  json: boolean,
): (error: unknown) => number {
  const writeJson = jsonLineWriter(context);
  return (error) => {
    renderer().close();
    const exitCode = exitCodeForError(error);
    printError(context, error);
    if (json && DatalystError.isInstance(error)) {
      writeJson({
        type: 'cli-error',
        error: { code: error.code, message: error.message, fix: error.fix, fault: error.fault },
        exitCode,
      });
    }
    return exitCode;
  };
}
