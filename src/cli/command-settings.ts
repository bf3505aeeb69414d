import { resolveAnalyzeSettings } from '../config/analyze-settings.ts';
import { loadConfigFile } from '../config/config-file.ts';
import type { AnalyzeFlags, AnalyzeSettings } from '../config/index.ts';
import type { CliContext } from './cli-context.ts';

/**
 * The settings of a command that runs an analysis: its flags over the
 * environment over the config file (`--config`, DATALYST_CONFIG or the nearest
 * datalyst.config.json) over the defaults.
 */
export async function loadCommandSettings(
  context: CliContext,
  workspace: string,
  instruction: string | undefined,
  flags: AnalyzeFlags & { config?: string | undefined },
): Promise<AnalyzeSettings> {
  const configFile = await loadConfigFile(flags.config ?? context.env.configPath, context.cwd);
  return resolveAnalyzeSettings({
    workspace,
    instruction,
    flags,
    env: context.env,
    configFile,
    cwd: context.cwd,
    now: context.now(),
  });
}
