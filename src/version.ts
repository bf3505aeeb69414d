import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * Datalyst's version, read from its package.json at run time: the file sits
 * one folder above this module both in a clone (src/) and in the published
 * package (dist/), and is not copied into the build.
 */
export const VERSION: string = ((): string => {
  try {
    const parsed: unknown = JSON.parse(
      readFileSync(fileURLToPath(new URL('../package.json', import.meta.url)), 'utf8'),
    );
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
