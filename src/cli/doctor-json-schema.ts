import { z } from 'zod';
import { JSON_LINES_SCHEMA_VERSION } from './json-line-schema.ts';

/** `datalyst doctor --json`: one object; schemas/doctor.schema.json is generated from it. */
export const doctorJsonSchema = z.object({
  type: z.literal('doctor'),
  time: z.iso.datetime(),
  schemaVersion: z.literal(JSON_LINES_SCHEMA_VERSION),
  /** True when nothing failed (warnings allowed): exit code 0. */
  ok: z.boolean(),
  exitCode: z.number().int(),
  checks: z.array(
    z.object({
      name: z.string(),
      status: z.enum(['ok', 'warn', 'fail', 'info']),
      detail: z.string(),
      fix: z.string().nullable(),
    }),
  ),
  /** Set when the command could not check at all (a bad option or config file). */
  error: z.object({ code: z.string(), message: z.string(), fix: z.string(), fault: z.string() }).nullable(),
});
export type DoctorJson = z.infer<typeof doctorJsonSchema>;
