import { randomBytes } from 'node:crypto';

/** Datalyst's version from package.json, for the trace's provenance. */
export { VERSION as datalystVersion } from '../version.ts';

/** `20250101-120000-a1b2c3`: sorts by start time, unique enough for one machine's run folders. */
export function newRunId(now: Date = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${stamp}-${randomBytes(3).toString('hex')}`;
}
