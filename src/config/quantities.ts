import { ConfigError } from '../errors/index.ts';

/**
 * Durations and sizes as people type them on a command line: `90s`, `2m`,
 * `1h30m`, `2g`, `512m`. A bare number takes the unit the option names
 * (seconds for timeouts, MiB for memory).
 */

const durationUnitsMs: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** Parses `1500ms`, `90s`, `2m`, `1h30m`, or a bare number in `bareUnit`. */
export function parseDurationMs(text: string, option: string, bareUnit: 's' | 'm' = 's'): number {
  const trimmed = text.trim().toLowerCase();
  const fail = (): never => {
    throw new ConfigError(
      `${option} must be a duration like 90s, 10m or 1h30m; got "${text}".`,
      `Write a positive number with a unit (ms, s, m, h); a bare number counts as ${bareUnit === 's' ? 'seconds' : 'minutes'}.`,
    );
  };
  if (/^\d+(\.\d+)?$/.test(trimmed)) {
    const value = Number(trimmed) * (durationUnitsMs[bareUnit] ?? 1000);
    return value > 0 ? Math.round(value) : fail();
  }
  const parts = [...trimmed.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((part) => part[0]).join('') !== trimmed) return fail();
  const total = parts.reduce((sum, part) => sum + Number(part[1]) * (durationUnitsMs[part[2] ?? ''] ?? 0), 0);
  return total > 0 ? Math.round(total) : fail();
}

const sizeUnitsMb: Readonly<Record<string, number>> = {
  k: 1 / 1024,
  kb: 1 / 1024,
  kib: 1 / 1024,
  m: 1,
  mb: 1,
  mib: 1,
  g: 1024,
  gb: 1024,
  gib: 1024,
};

/** Parses `512m`, `2g`, `1.5GiB`, or a bare number of MiB (1024-based throughout, like Docker). */
export function parseSizeMb(text: string, option: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/.exec(text.trim().toLowerCase());
  const factor = match ? (match[2] === '' ? 1 : sizeUnitsMb[match[2] ?? '']) : undefined;
  const value = match && factor !== undefined ? Number(match[1]) * factor : 0;
  if (!(value > 0)) {
    throw new ConfigError(
      `${option} must be a size like 512m or 2g; got "${text}".`,
      'Write for example 512m or 2g (units k, m, g; a bare number counts as MiB).',
    );
  }
  return value;
}

/** Parses a positive number (`1.5`), or a positive integer when `integer` is set. */
export function parsePositiveNumber(text: string, option: string, integer = false): number {
  const trimmed = text.trim();
  const value = /^\d+(\.\d+)?$/.test(trimmed) ? Number(trimmed) : Number.NaN;
  if (!(value > 0) || (integer && !Number.isInteger(value))) {
    throw new ConfigError(
      `${option} must be a positive ${integer ? 'whole number' : 'number'}; got "${text}".`,
      option.startsWith('--')
        ? `Pass for example ${option} ${integer ? '30' : '1.5'}.`
        : `Set for example ${option}=${integer ? '30' : '1.5'}, or unset it.`,
    );
  }
  return value;
}
