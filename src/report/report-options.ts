import { z } from 'zod';
import { ConfigError } from '../errors/index.ts';
import { firstOptionIssue } from '../util/option-names.ts';

/*
 * The options of `renderReport` and `renderRunFolder`, checked before
 * anything is written: `{ format: ['md'] }` (for `formats`) wrote all four
 * formats, and `{ formats: ['docx'] }` wrote nothing and said nothing.
 */

const reportFormats = ['html', 'md', 'ipynb', 'json', 'pdf'] as const;
const formatList = reportFormats.map((format) => `'${format}'`).join(', ');

const shape = {
  outDir: z.string().min(1),
  formats: z.array(z.enum(reportFormats)).min(1),
  chromiumPath: z.string().min(1),
  artifactsDir: z.string().min(1),
  maxChartRows: z.number().int().positive(),
  signal: z.instanceof(AbortSignal),
  now: z.instanceof(Date),
  chartPool: z.custom<object>((value) => typeof value === 'object' && value !== null),
  audience: z.enum(['cli', 'server']),
};

const expected: Record<keyof typeof shape, string> = {
  outDir: 'a folder path',
  formats: `a list of one or more of ${formatList}`,
  chromiumPath: 'the path of a Chromium executable',
  artifactsDir: 'a folder path',
  maxChartRows: 'a whole number above 0',
  signal: 'an AbortSignal',
  now: 'a Date',
  chartPool: 'a ChartPool',
  audience: "'cli' or 'server'",
};

const renderReportSchema = z.strictObject({
  ...shape,
  formats: shape.formats.optional(),
  chromiumPath: shape.chromiumPath.optional(),
  artifactsDir: shape.artifactsDir.optional(),
  maxChartRows: shape.maxChartRows.optional(),
  signal: shape.signal.optional(),
  now: shape.now.optional(),
  chartPool: shape.chartPool.optional(),
  audience: shape.audience.optional(),
});
const { artifactsDir: _artifactsDir, ...runFolderShape } = renderReportSchema.shape;
const renderRunFolderSchema = z.strictObject({ ...runFolderShape, outDir: shape.outDir.optional() });

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(describe).join(', ')}]`;
  if (value === null || typeof value !== 'object') return String(value);
  return 'an object';
}

function check(schema: z.ZodObject, options: unknown, entryPoint: string): void {
  const parsed = schema.safeParse(options);
  if (parsed.success) return;
  const issue = firstOptionIssue(schema, parsed.error, entryPoint);
  if (issue === undefined) return;
  const name = String(issue.path[0] ?? '');
  if (!(name in expected)) {
    throw new ConfigError(
      `${entryPoint} takes an options object; got ${describe(options)}.`,
      `Call ${entryPoint} with an object, e.g. { formats: ['html'] }.`,
      parsed.error,
    );
  }
  const wanted = expected[name as keyof typeof expected];
  const got = describe((options as Record<string, unknown>)[name]);
  throw new ConfigError(
    `The option ${name} of ${entryPoint} must be ${wanted}; got ${got}.`,
    name === 'formats'
      ? `Pass formats as a list of ${formatList}, or leave it out for html, md, ipynb and json.`
      : `Pass ${name} as ${wanted}, or leave it out for its default.`,
    parsed.error,
  );
}

export function assertRenderReportOptions(options: unknown): void {
  check(renderReportSchema, options, 'renderReport()');
}

export function assertRenderRunFolderOptions(options: unknown): void {
  check(renderRunFolderSchema, options, 'renderRunFolder()');
}
