/**
 * Readers for a turn's SSE events. The server's schema (`TurnEvent`) keeps
 * the library's events loose, so each field is checked here before use.
 */
export type EventRecord = Record<string, unknown>;

export function parseEvent(data: string): EventRecord | null {
  try {
    const value: unknown = JSON.parse(data);
    return typeof value === 'object' &&
      value !== null &&
      !Array.isArray(value) &&
      typeof (value as EventRecord).type === 'string'
      ? (value as EventRecord)
      : null;
  } catch {
    return null;
  }
}

export const str = (value: unknown): string => (typeof value === 'string' ? value : '');
export const num = (value: unknown): number =>
  typeof value === 'number' && Number.isFinite(value) ? value : 0;
export const rec = (value: unknown): EventRecord =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as EventRecord) : {};
export const arr = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
