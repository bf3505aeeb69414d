import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { AgentEvent } from '../agent/index.ts';

type ExecutionEnd = Extract<AgentEvent, { type: 'execution-end' }>;

/** A figure's name in the server's API and on disk: `<outputId>--<figureId>` (the kernel's figure ids restart with a new kernel; output ids do not). */
export const figureNamePattern = /^[A-Za-z0-9_-]{1,64}--[A-Za-z0-9_-]{1,64}$/;

/**
 * A figure's name as a file to download (`files` of a completion): `<outputId>-figure-<n>.png`, n counting
 * the cell's figures from 1, the name the report gives its own copy (`assets/E7-figure-1.png`).
 */
export const figureFileNamePattern = /^[A-Za-z0-9_-]{1,64}-figure-[1-9][0-9]{0,5}\.png$/;

export const figureFileName = (outputId: string, position: number): string =>
  `${outputId}-figure-${position + 1}.png`;

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
export async function storeFigures(runDir: string, event: ExecutionEnd): Promise<ExecutionEnd> {
  const { figures } = event.result;
  if (figures.length === 0) return event;
  const bytes = figures.reduce((sum, figure) => sum + figure.dataBase64.length, 0);
  const stored: ((typeof figures)[number] & { name?: string })[] = [];
  for (const figure of figures) {
    const name = `${event.outputId}--${figure.id}`;
    if (!figureNamePattern.test(name)) {
      stored.push(figure);
      continue;
    }
    try {
      const file = figurePath(runDir, name);
      const data = Buffer.from(figure.dataBase64, 'base64');
      // A cell's usual figures are written synchronously: the turn's next event waits for them, and a few
      // hundred KB take well under a millisecond, while each thread-pool round trip waited for a time slice on
      // a busy machine (~3 ms of every turn that drew one, bench:server). Larger ones (a cell may show
      // megabytes) go through the thread pool, so they never hold up the other threads' streams.
      if (bytes <= SYNC_WRITE_MAX_BASE64_CHARS) {
        mkdirSync(path.dirname(file), { recursive: true });
        writeFileSync(file, data);
      } else {
        await mkdir(path.dirname(file), { recursive: true });
        await writeFile(file, data);
      }
      const { dataBase64: _bytes, ...rest } = figure;
      stored.push({ ...rest, name, dataBase64: '' });
    } catch {
      stored.push(figure);
    }
  }
  return { ...event, result: { ...event.result, figures: stored } };
}

/** A cell's figures up to this much base64 (~256 KiB of PNG) are written without the thread pool. */
const SYNC_WRITE_MAX_BASE64_CHARS = 350_000;

/** A stored figure's PNG bytes, or null when there is none. */
export async function readStoredFigure(runDir: string, name: string): Promise<Buffer | null> {
  if (!figureNamePattern.test(name)) return null;
  return readFile(figurePath(runDir, name)).catch(() => null);
}

/** What a turn event says of the figures this module stored: an `execution-end`'s output id and each figure's `name`. */
const storedFiguresEventSchema = z.object({
  type: z.literal('execution-end'),
  outputId: z.string(),
  result: z.object({ figures: z.array(z.object({ name: z.string().optional() })) }),
});

/**
 * The figures of one turn event that are in the run folder: each one's file
 * name (`figureFileName`) and stored name. None for any other event, or a
 * figure that could not be written (it stayed in the event).
 */
export function storedFiguresOf(event: { type: string }): { fileName: string; name: string }[] {
  // Most events are text deltas: not parsed.
  if (event.type !== 'execution-end') return [];
  const parsed = storedFiguresEventSchema.safeParse(event);
  if (!parsed.success) return [];
  const { outputId, result } = parsed.data;
  return result.figures.flatMap((figure, position) =>
    figure.name !== undefined && figureNamePattern.test(figure.name)
      ? [{ fileName: figureFileName(outputId, position), name: figure.name }]
      : [],
  );
}
