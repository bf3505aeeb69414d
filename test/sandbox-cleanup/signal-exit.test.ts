import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';

/**
 * signal-exit (execa while it runs a child, ink, ora, many CLIs) listens to signals and, like the
 * library's exit cleanup, acts only when alone. Regressions found by a review: the re-raised signal
 * arrived after the event loop had emptied, so the process ended with status 0, not by the signal;
 * and an application that replaced every listener with its own had its handler taken for signal-exit's.
 */
const app = fileURLToPath(new URL('./fixtures/signal-exit-app.ts', import.meta.url));

async function signalled(mode: string, signal: NodeJS.Signals) {
  const child = execa(process.execPath, ['--import', 'tsx', app, mode], { reject: false, buffer: true });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) resolve();
    });
    void child.then((result) => reject(new Error(`exited before it was ready: ${String(result.stderr)}`)));
  });
  child.kill(signal);
  return child;
}

describe('exit cleanup beside signal-exit', () => {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`${signal}: the sandbox is removed, signal-exit's callbacks run, and the process ends by ${signal}`, async () => {
      const result = await signalled('alone', signal);
      expect(result.stderr).toContain(`datalyst: ${signal}: removing 1 sandbox(es) before exiting`);
      expect(result.stdout).toContain(`{"signalExit":{"code":null,"signal":"${signal}"}}`);
      expect(result.signal).toBe(signal);
      expect(result.exitCode).toBeUndefined();
    });
  }

  it("an application that replaced signal-exit's listener with its own keeps control", async () => {
    const result = await signalled('replaced', 'SIGTERM');
    expect(result.stdout).toContain('application handler');
    expect(result.stderr).not.toContain('removing');
    expect(result.exitCode).toBe(0);
  });
});
