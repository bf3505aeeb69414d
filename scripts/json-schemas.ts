// JSON Schemas generated from Datalyst's zod schemas (zod 4's toJSONSchema),
// shipped in schemas/ and in the package (`datalyst/schemas/*`): the lines of
// `--json`, the config file (`"$schema": "./node_modules/datalyst/schemas/config.schema.json"`),
// and the trace, line by line (trace.jsonl) and whole (trace.json).
// `npm run schemas` writes them; `npm run build` too; a unit test fails when
// the committed files are not what the zod schemas give.
import { writeFile, mkdir } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { z } from 'zod';
import { doctorJsonSchema } from '../src/cli/doctor-json-schema.ts';
import { jsonLineSchema } from '../src/cli/json-line-schema.ts';
import { configFileSchema } from '../src/config/config-file.ts';
import { traceDocumentSchema, traceRecordSchema } from '../src/trace/schema.ts';

export const schemasDir = fileURLToPath(new URL('../schemas/', import.meta.url));

function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output', title: string, description: string): string {
  const generated = z.toJSONSchema(schema, {
    io,
    // Refinements (base64 padding, …) have no JSON Schema form; the shape is what tools need.
    unrepresentable: 'any',
  });
  return `${JSON.stringify({ ...generated, title, description }, null, 2)}\n`;
}

/** File name → text of every shipped schema. */
export function generateJsonSchemas(): Record<string, string> {
  return {
    'json-lines.schema.json': jsonSchemaOf(
      jsonLineSchema,
      'output',
      'Datalyst --json line',
      'One line of `datalyst analyze --json` (stdout): an agent event or a line of the CLI, each with `time` (ISO 8601) and `schemaVersion`.',
    ),
    'doctor.schema.json': jsonSchemaOf(
      doctorJsonSchema,
      'output',
      'Datalyst doctor --json',
      'The object `datalyst doctor --json` writes: every check with its status, detail and fix, and the exit code.',
    ),
    'config.schema.json': jsonSchemaOf(
      configFileSchema,
      'input',
      'datalyst.config.json',
      'Settings a project keeps next to its data; unknown keys are errors, API keys are not accepted.',
    ),
    'trace-record.schema.json': jsonSchemaOf(
      traceRecordSchema,
      'output',
      'Datalyst trace record',
      'One line of a run folder’s trace.jsonl.',
    ),
    'trace.schema.json': jsonSchemaOf(
      traceDocumentSchema,
      'output',
      'Datalyst trace',
      'A run folder’s trace.json: every record of the run in one document.',
    ),
  };
}

export async function writeJsonSchemas(): Promise<void> {
  await mkdir(schemasDir, { recursive: true });
  for (const [name, text] of Object.entries(generateJsonSchemas()))
    await writeFile(`${schemasDir}${name}`, text);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await writeJsonSchemas();
}
