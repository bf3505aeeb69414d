import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Datalyst's version from package.json, for the trace's provenance. */
export const datalystVersion = ((): string => {
  try {
    const packagePath = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../package.json');
    const parsed: unknown = JSON.parse(readFileSync(packagePath, 'utf8'));
    return typeof parsed === 'object' &&
      parsed !== null &&
      'version' in parsed &&
      typeof parsed.version === 'string'
      ? parsed.version
      : '0.0.0';
  } catch {
    return '0.0.0';
  }
})();

/** `20250101-120000-a1b2c3`: sorts by start time, unique enough for one machine's run folders. */
export function newRunId(now: Date = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${stamp}-${randomBytes(3).toString('hex')}`;
}
