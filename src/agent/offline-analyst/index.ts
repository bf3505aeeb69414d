export { createOfflineAnalyst, offlineAnalystTurn, OFFLINE_ANALYST_ID } from './offline-analyst.ts';
export type { OfflineAnalystOptions } from './offline-analyst.ts';
export { focusEntries } from './focus-tables.ts';
/** What the offline analyst's cells print, read back (deep analysis compresses a sub-analysis from them). */
export { readFindings } from './conversation.ts';
export { stageOfCode } from './stages.ts';
export type { Stage as OfflineAnalystStage } from './stages.ts';
/** An unreadable file's reason in plain words (the deep brief names each such file with it). */
export { plainFileError } from './workspace-inventory.ts';
