/** Small formatters shared by the HTML and Markdown reports. */

import type { StepRecord } from '../trace/schema.ts';

/** What a step of the process is called in the report. */
export const stepLabel: Record<StepRecord['kind'], string> = {
  analyze: 'Analyze',
  understand: 'Understand',
  code: 'Code',
  answer: 'Answer',
  ask: 'Question to the user',
  text: 'Text outside tags',
};

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** Exact and readable: `55,123 bytes (54 KiB)`. */
export function formatExactBytes(bytes: number): string {
  return bytes < 1024 ? `${bytes} B` : `${bytes.toLocaleString('en-US')} bytes (${formatBytes(bytes)})`;
}

export function formatDuration(durationMs: number): string {
  if (durationMs < 1000) return `${Math.round(durationMs)} ms`;
  const seconds = durationMs / 1000;
  if (seconds < 60) return `${seconds.toFixed(seconds < 10 ? 1 : 0)} s`;
  const minutes = Math.floor(seconds / 60);
  const rest = Math.round(seconds - minutes * 60);
  return rest === 0 ? `${minutes} min` : `${minutes} min ${rest} s`;
}

// en-GB and UTC named, so the text is the same on every machine. Months in full: en-GB's short
// September is "Sept" in recent ICU data and "Sep" in older, so "Sep" would depend on the Node build.
const utcTimeFormat = new Intl.DateTimeFormat('en-GB', {
  day: 'numeric',
  month: 'long',
  year: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
  timeZone: 'UTC',
});

/**
 * A recorded ISO time as a person reads it, in UTC: `24 November 2026, 14:05 UTC`.
 * Text that is no time is returned as it is.
 */
export function formatUtcTime(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  // Put together from parts: the literal between date and time differs between ICU versions (", " or " at ").
  const parts = utcTimeFormat.formatToParts(date);
  const part = (type: Intl.DateTimeFormatPartTypes) =>
    parts.find((entry) => entry.type === type)?.value ?? '';
  return `${part('day')} ${part('month')} ${part('year')}, ${part('hour')}:${part('minute')} UTC`;
}

/** The endpoint without user:password or query (a key could sit there). */
export function safeBaseUrl(baseUrl: string | null): string | null {
  if (baseUrl === null) return null;
  try {
    const url = new URL(baseUrl);
    url.username = '';
    url.password = '';
    url.search = '';
    url.hash = '';
    return url.toString();
  } catch {
    return '(not a valid URL)';
  }
}
