export { createOfflineAnalyst, offlineAnalystTurn, OFFLINE_ANALYST_ID } from './offline-analyst.ts';
export type { OfflineAnalystOptions } from './offline-analyst.ts';
