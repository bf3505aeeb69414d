import { open, readdir } from 'node:fs/promises';
import path from 'node:path';
import { isSameOrInside } from '../util/path-inside.ts';

/** How every trace.jsonl Datalyst writes begins (its first record). */
const TRACE_START = '{"type":"run-start"';

async function startsLikeATrace(file: string): Promise<boolean> {
  try {
    const handle = await open(file, 'r');
    try {
      const buffer = Buffer.alloc(TRACE_START.length);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
      return buffer.subarray(0, bytesRead).toString('utf8') === TRACE_START;
    } finally {
      await handle.close();
    }
  } catch {
    return false;
  }
}

function inside(dir: string, workspaceDir: string): string | null {
  const relative = path.relative(workspaceDir, dir);
  if (relative === '' || !isSameOrInside(dir, workspaceDir)) return null;
  return relative.split(path.sep).join('/');
}

/**
 * The folders of a workspace that hold Datalyst's own output, so that
 * `datalyst analyze .` never analyses its earlier reports: the folder this
 * run writes to (and the runs folder holding it) when they lie inside the
 * workspace, and every folder holding a Datalyst trace (a `trace.jsonl`
 * beginning with a run-start record: only its first bytes are read).
 * Workspace-relative, `/`-separated, outermost only.
 */
export async function findOwnOutput(
  workspaceDir: string,
  output: { outDir: string; runsDir: string | null },
): Promise<string[]> {
  const found = new Set<string>();
  for (const dir of [output.runsDir, output.outDir]) {
    const relative = dir === null ? null : inside(path.resolve(dir), path.resolve(workspaceDir));
    if (relative !== null) found.add(relative);
  }
  const entries = await readdir(workspaceDir, { withFileTypes: true, recursive: true }).catch(() => []);
  for (const entry of entries) {
    if (!entry.isFile() || entry.name !== 'trace.jsonl') continue;
    if (!(await startsLikeATrace(path.join(entry.parentPath, entry.name)))) continue;
    const relative = inside(entry.parentPath, path.resolve(workspaceDir));
    if (relative !== null) found.add(relative);
  }
  const dirs = [...found].sort();
  // Outermost only: runs/ covers runs/2025…-sales/.
  return dirs.filter((dir) => !dirs.some((other) => other !== dir && dir.startsWith(`${other}/`)));
}
