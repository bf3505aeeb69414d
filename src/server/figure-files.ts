import { mkdirSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { AgentEvent } from '../agent/index.ts';

type ExecutionEnd = Extract<AgentEvent, { type: 'execution-end' }>;

/** A figure's name in the server's API and on disk: `<outputId>--<figureId>` (the kernel's figure ids restart with a new kernel; output ids do not). */
export const figureNamePattern = /^[A-Za-z0-9_-]{1,64}--[A-Za-z0-9_-]{1,64}$/;

export const figurePath = (runDir: string, name: string): string =>
  path.join(runDir, 'figures', `${name}.png`);

/**
 * Takes a cell's figures out of its `execution-end` event: each PNG is
 * written to the run folder's `figures/` and the event keeps its size and a
 * `name` (`GET …/figures/{name}`), so that a turn's events (SSE, the turn
 * log) carry no base64: a page loads the figures beside the stream, in
 * parallel, and the browser can keep them. The trace and the report keep
 * their own copy. A figure that cannot be written stays in the event.
 */
export function storeFigures(runDir: string, event: ExecutionEnd): ExecutionEnd {
  const { figures } = event.result;
  if (figures.length === 0) return event;
  const stored = figures.map((figure) => {
    const name = `${event.outputId}--${figure.id}`;
    if (!figureNamePattern.test(name)) return figure;
    try {
      // Synchronously: the turn's next event waits for the file, and a figure (a PNG the kernel capped) is
      // written in well under a millisecond, while four thread-pool round trips each waited for a time
      // slice on a busy machine (~3 ms of every turn that drew one, bench:server).
      mkdirSync(path.join(runDir, 'figures'), { recursive: true });
      writeFileSync(figurePath(runDir, name), Buffer.from(figure.dataBase64, 'base64'));
      const { dataBase64: _bytes, ...rest } = figure;
      return { ...rest, name, dataBase64: '' };
    } catch {
      return figure;
    }
  });
  return { ...event, result: { ...event.result, figures: stored } };
}

/** A stored figure's PNG bytes, or null when there is none. */
export async function readStoredFigure(runDir: string, name: string): Promise<Buffer | null> {
  if (!figureNamePattern.test(name)) return null;
  return readFile(figurePath(runDir, name)).catch(() => null);
}
