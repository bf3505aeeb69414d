// Sizes and durations for people, in progress lines and messages.
import { formatFileSize } from '../agent/first-message.ts';

/** `1.2 MB`, `340 KB`, `2.0 GB`: sizes for people (1024-based, matching the cap options). */
export function formatBytes(sizeBytes: number): string {
  return formatFileSize(sizeBytes, ' ');
}

/** `850 ms`, `4.2 s`, `3 min 5 s`. */
export function formatDuration(durationMs: number): string {
  if (durationMs < 1000) return `${Math.round(durationMs)} ms`;
  if (durationMs < 60_000) return `${(durationMs / 1000).toFixed(1)} s`;
  const totalSeconds = Math.round(durationMs / 1000);
  const minutes = Math.floor(totalSeconds / 60);
  const seconds = totalSeconds % 60;
  return seconds === 0 ? `${minutes} min` : `${minutes} min ${seconds} s`;
}
