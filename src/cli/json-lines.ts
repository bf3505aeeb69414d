import { DatalystError } from '../errors/index.ts';
import type { AgentEvent } from '../index.ts';

/**
 * `--json`: one JSON object per line on stdout, for scripts. Agent events
 * keep their shape, except that image bytes (`dataBase64` of figures) are
 * left out (the report and the trace hold them) and errors become plain
 * objects. The CLI adds its own lines: `workspace-check`, `report-end` and
 * `cli-error`, so a script sees where the report went and why a run failed.
 */

/** A line the CLI writes itself (not an agent event). */
export type CliJsonLine =
  | {
      type: 'workspace-check';
      dir: string;
      totalBytes: number;
      dataFiles: string[];
      skipped: { path: string; reason: string }[];
    }
  | { type: 'report-end'; outDir: string; files: { format: string; path: string }[] }
  | {
      type: 'cli-error';
      error: { code: string; message: string; fix: string; fault: string };
      exitCode: number;
    };

function serializeError(error: DatalystError): Record<string, string> {
  return { name: error.name, code: error.code, message: error.message, fix: error.fix, fault: error.fault };
}

function replacer(key: string, value: unknown): unknown {
  if (key === 'dataBase64') return undefined;
  if (DatalystError.isInstance(value)) return serializeError(value);
  if (value instanceof Error) return { name: value.name, message: value.message };
  return value;
}

export function toJsonLine(event: AgentEvent | CliJsonLine): string {
  return `${JSON.stringify(event, replacer)}\n`;
}
