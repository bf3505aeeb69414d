import { readdirSync, readlinkSync } from 'node:fs';

/** This process's open file descriptors on `file` (Linux: /proc/self/fd): a trace left open shows here. */
export function descriptorsOn(file: string): number {
  let count = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) === file) count++;
    } catch {
      // The descriptor readdir itself used, closed by now.
    }
  }
  return count;
}
