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
