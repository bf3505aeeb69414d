import type { CliContext } from './cli-context.ts';
import type { ProgressRenderer } from './progress-renderer.ts';
import type { ReportFormat } from '../report/index.ts';

/**
 * What a command that runs code says and checks before it starts: the local
 * backend's warning (no isolation), and Chromium when a PDF is asked for — said
 * now, not after the run. `code` names what runs: the model's code, or a
 * recorded run's.
 */
export async function earlyRunChecks(
  context: CliContext,
  renderer: ProgressRenderer,
  settings: { sandbox: string; formats: readonly ReportFormat[] },
  code: 'generated' | 'recorded',
): Promise<void> {
  if (settings.sandbox === 'local') {
    renderer.warn(
      `--sandbox local runs the ${code} code on THIS machine with NO isolation: it can read and change your files.`,
    );
  }
  if (settings.formats.includes('pdf')) {
    const { assertChromiumInstalled } = await import('../report/pdf.ts');
    await assertChromiumInstalled(context.env.chromium);
  }
}
