import type { CliOutput } from './cli-context.ts';

/**
 * A process stream as a CLI output that survives its reader going away:
 * `datalyst analyze … | head -3` closes the pipe after three lines, and the
 * next write fails with EPIPE, an 'error' event that would crash the process.
 * From then on writes to that stream are dropped and the run goes on to
 * write its report, as the user asked; the exit code is the run's.
 */
export function pipeSafeOutput(stream: NodeJS.WriteStream): CliOutput & { readonly closed: boolean } {
  let closed = false;
  // Any write error (EPIPE, or EIO from a gone terminal) means nobody reads this stream any more.
  stream.on('error', () => {
    closed = true;
  });
  return {
    write: (text) => {
      if (closed || stream.destroyed) return;
      stream.write(text);
    },
    isTTY: stream.isTTY === true,
    ...(stream.columns === undefined ? {} : { columns: stream.columns }),
    get closed() {
      return closed;
    },
  };
}
