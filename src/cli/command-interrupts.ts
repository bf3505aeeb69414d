import type { CliContext } from './cli-context.ts';
import { ExitCode } from './exit-codes.ts';
import { handleInterrupts, type InterruptHandle } from './interrupt.ts';

/**
 * Ctrl-C for a command that runs an analysis: the first says what is being
 * stopped (`stopping`, e.g. "stopping the running cell, then writing a
 * partial report") and lets the command finish; the second quits at once,
 * saying what is kept and how to get its report when `afterQuit` knows
 * (e.g. "deep.json keeps what was found; `datalyst report <folder>` writes its report.").
 */
export function handleCommandInterrupts(
  context: CliContext,
  renderer: { warn(text: string): void; close(): void },
  stopping: string,
  afterQuit: () => string | null = () => null,
): InterruptHandle {
  return handleInterrupts({
    source: context.signals,
    onFirst: () => renderer.warn(`Cancelling: ${stopping}. Ctrl-C again quits at once.`),
    onSecond: () => {
      renderer.close();
      const hint = afterQuit();
      context.stderr.write(`Quit without waiting.${hint === null ? '' : ` ${hint}`}\n`);
      context.exit(ExitCode.cancelled);
    },
  });
}
