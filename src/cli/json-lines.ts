import { DatalystError } from '../errors/index.ts';
import type { AgentEvent, DeepEvent, RerunResult } from '../index.ts';
import { JSON_LINES_SCHEMA_VERSION } from './json-line-schema.ts';

/**
 * `--json`: one JSON object per line on stdout, for scripts. Agent events
 * keep their shape, except that image bytes (`dataBase64` of figures) are
 * left out (the report and the trace hold them) and errors become plain
 * objects. The CLI adds its own lines: `workspace-check`, `preflight`,
 * `rerun-summary` (`datalyst rerun`), `report-end` and `cli-error`, so a script sees where the report went and
 * why a run failed. Every line carries `time` (ISO 8601) and `schemaVersion`;
 * json-line-schema.ts holds the schema of all of them.
 */

/** A line the CLI writes itself (not an agent event). */
export type CliJsonLine =
  | {
      type: 'workspace-check';
      dir: string;
      /** Folders left out: Datalyst's own output. */
      excluded: string[];
      totalBytes: number;
      dataFiles: string[];
      skipped: { path: string; reason: string }[];
    }
  | { type: 'preflight'; step: string; detail: string }
  | ({ type: 'rerun-summary' } & Pick<
      RerunResult,
      'rerunOf' | 'cells' | 'failedCell' | 'answerSource' | 'numbers'
    >)
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

export function toJsonLine(event: AgentEvent | DeepEvent | CliJsonLine, time: Date = new Date()): string {
  // `type` first, then when and in which format, then the event's own fields.
  const { type, ...fields } = event;
  const stamped = { type, time: time.toISOString(), schemaVersion: JSON_LINES_SCHEMA_VERSION, ...fields };
  return `${JSON.stringify(stamped, replacer)}\n`;
}
