export { readEnv, readDatalystEnvironment } from './env.ts';
export type { DatalystEnvironment } from './env.ts';
export { parseDurationMs, parseSizeMb, parsePositiveNumber } from './quantities.ts';
export {
  CONFIG_FILE_NAME,
  reportFormatNames,
  modelProfileNames,
  sandboxBackendNames,
  configFileSchema,
  parseConfigFile,
  loadConfigFile,
} from './config-file.ts';
export type { ConfigFile, LoadedConfigFile, ReportFormatName } from './config-file.ts';
export {
  DEFAULT_INSTRUCTION,
  analyzeDefaults,
  parseFormats,
  inferProfile,
  defaultRunDir,
  resolveAnalyzeSettings,
  resolveModelSettings,
} from './analyze-settings.ts';
export type {
  AnalyzeFlags,
  ModelSettings,
  AnalyzeSettings,
  ResolveAnalyzeSettingsInput,
} from './analyze-settings.ts';
