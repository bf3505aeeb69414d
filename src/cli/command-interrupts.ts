import type { CliContext } from './cli-context.ts';
import { ExitCode } from './exit-codes.ts';
import { handleInterrupts, type InterruptHandle } from './interrupt.ts';

/**
 * Ctrl-C for a command that runs an analysis: the first says what is being
 * stopped (`stopping`, e.g. "stopping the running cell, then writing a
 * partial report") and lets the command finish; the second quits at once.
 */
export function handleCommandInterrupts(
  context: CliContext,
  renderer: { warn(text: string): void; close(): void },
  stopping: string,
): InterruptHandle {
  return handleInterrupts({
    source: context.signals,
    onFirst: () => renderer.warn(`Cancelling: ${stopping}. Ctrl-C again quits at once.`),
    onSecond: () => {
      renderer.close();
      context.stderr.write('Quit without waiting.\n');
      context.exit(ExitCode.cancelled);
    },
  });
}
