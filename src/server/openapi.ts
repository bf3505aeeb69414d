import { z } from 'zod';
import { VERSION } from '../version.ts';
import {
  createThreadRequestSchema,
  healthSchema,
  reportFormatSchema,
  createTurnRequestSchema,
  threadDeletedSchema,
  threadListSchema,
  threadProfileSchema,
  threadSchema,
  turnEventSchema,
  turnSchema,
} from './api-schemas.ts';
import {
  chatCompletionChunkSchema,
  chatCompletionRequestSchema,
  chatCompletionSchema,
  errorBodySchema,
  fileDeletedSchema,
  fileListSchema,
  fileObjectSchema,
  modelListSchema,
} from './openai-schemas.ts';
import { reportContentType } from './report-cache.ts';

interface Operation {
  method: 'get' | 'post' | 'delete';
  path: string;
  summary: string;
  description?: string;
  body?: { schema: z.ZodType; type?: string };
  response: {
    status: number;
    description?: string;
    /** Media type → the body's schema (null: bytes or text, not described). */
    content?: Record<string, z.ZodType | null>;
  };
  query?: Record<string, { schema: z.ZodType; description: string }>;
}

const sse = 'text/event-stream';
const json = 'application/json';

/** `format` of both report routes: the same parse the handler uses, so the enum and its default cannot drift. */
const reportFormatQuery = {
  format: {
    schema: reportFormatSchema.default('html'),
    description:
      'html (default), md (one file, images inline), ipynb (the notebook), json (the trace) or pdf (the HTML ' +
      'printed by Chromium on the server, as a download; 501 `CHROMIUM_UNAVAILABLE` when the server has none).',
  },
};
const reportContent = Object.fromEntries(
  reportFormatSchema.options.map((format) => [reportContentType[format].split(';')[0] as string, null]),
);

/** Every route, with the zod schemas the handlers parse with: the document cannot drift from the code. */
const operations: Operation[] = [
  {
    method: 'get',
    path: '/health',
    summary: 'Liveness and load (no API key needed)',
    response: { status: 200, content: { [json]: healthSchema } },
  },
  {
    method: 'get',
    path: '/v1/models',
    summary: 'The configured model',
    response: { status: 200, content: { [json]: modelListSchema } },
  },
  {
    method: 'post',
    path: '/v1/files',
    summary: 'Upload a data file (multipart field `file`, optional `purpose`)',
    body: {
      schema: z.object({ file: z.string().meta({ format: 'binary' }), purpose: z.string().optional() }),
      type: 'multipart/form-data',
    },
    response: { status: 200, content: { [json]: fileObjectSchema } },
  },
  {
    method: 'get',
    path: '/v1/files',
    summary: 'List uploaded files, newest first',
    response: { status: 200, content: { [json]: fileListSchema } },
  },
  {
    method: 'get',
    path: '/v1/files/{id}',
    summary: 'A file object',
    response: { status: 200, content: { [json]: fileObjectSchema } },
  },
  {
    method: 'get',
    path: '/v1/files/{id}/content',
    summary: "A file's bytes",
    response: { status: 200, content: { 'application/octet-stream': null } },
  },
  {
    method: 'delete',
    path: '/v1/files/{id}',
    summary: 'Delete a file',
    response: { status: 200, content: { [json]: fileDeletedSchema } },
  },
  {
    method: 'post',
    path: '/v1/chat/completions',
    summary: 'DeepAnalyze-compatible analysis; `stream: true` answers with chat.completion.chunk events',
    body: { schema: chatCompletionRequestSchema },
    response: {
      status: 200,
      description:
        `JSON (ChatCompletion); with \`stream: true\`, ${sse}: each \`data:\` is a ChatCompletionChunk, ` +
        'the last one with `finish_reason`, `delta.files`, `delta.thread_id`, `generated_files` and `termination`; ' +
        'then `data: [DONE]`.',
      content: { [json]: chatCompletionSchema, [sse]: chatCompletionChunkSchema },
    },
  },
  {
    method: 'post',
    path: '/v1/threads',
    summary: 'Create a thread over uploaded files',
    body: { schema: createThreadRequestSchema },
    response: { status: 201, content: { [json]: threadSchema } },
  },
  {
    method: 'get',
    path: '/v1/threads',
    summary: 'List threads, newest first',
    response: { status: 200, content: { [json]: threadListSchema } },
  },
  {
    method: 'get',
    path: '/v1/threads/{threadId}',
    summary: 'A thread with its turns',
    response: { status: 200, content: { [json]: threadSchema } },
  },
  {
    method: 'delete',
    path: '/v1/threads/{threadId}',
    summary: 'Delete a thread (cancels its turn)',
    response: { status: 200, content: { [json]: threadDeletedSchema } },
  },
  {
    method: 'get',
    path: '/v1/threads/{threadId}/profile',
    summary: "The thread's files profiled in the sandbox before any question",
    response: { status: 200, content: { [json]: threadProfileSchema } },
  },
  {
    method: 'post',
    path: '/v1/threads/{threadId}/turns',
    summary: 'Ask a question (queued; follow events_url)',
    body: { schema: createTurnRequestSchema },
    response: { status: 202, content: { [json]: turnSchema } },
  },
  {
    method: 'get',
    path: '/v1/threads/{threadId}/turns/{index}',
    summary: 'A turn',
    response: { status: 200, content: { [json]: turnSchema } },
  },
  {
    method: 'get',
    path: '/v1/threads/{threadId}/turns/{index}/events',
    summary: "The turn's events as SSE (id = seq); re-attach with Last-Event-ID or ?after=",
    query: {
      after: { schema: z.coerce.number().int().nonnegative(), description: 'send the events after this seq' },
    },
    response: {
      status: 200,
      description: `${sse}: each \`data:\` is a TurnEvent; the stream ends after \`turn-done\`.`,
      content: { [sse]: turnEventSchema },
    },
  },
  {
    method: 'post',
    path: '/v1/threads/{threadId}/turns/{index}/cancel',
    summary: 'Cancel a queued or running turn',
    response: { status: 200, content: { [json]: turnSchema } },
  },
  {
    method: 'get',
    path: '/v1/threads/{threadId}/turns/{index}/report',
    summary: "The turn's report: the thread as it stood when this turn ended",
    description:
      "The questions, cells and answers up to the end of this turn, never a later turn's: a saved link keeps its meaning. " +
      'Rendered when first asked for and kept. A turn cancelled before its analysis started reports the turns before it ' +
      '(404 `NO_REPORT` when there are none); a turn not yet ended is a 409 `TURN_RUNNING`.',
    query: reportFormatQuery,
    response: { status: 200, description: 'The report in the asked format.', content: reportContent },
  },
  {
    method: 'get',
    path: '/v1/threads/{threadId}/report',
    summary: 'The report of the latest ended turn: the thread as it stood when that turn ended',
    query: reportFormatQuery,
    response: { status: 200, description: 'The report in the asked format.', content: reportContent },
  },
  {
    method: 'get',
    path: '/v1/threads/{threadId}/turns/{index}/charts/{chartId}',
    summary:
      "A vega-lite chart a cell displayed, drawn to sanitized SVG, named by its id in the execution-end event's charts[].id",
    response: { status: 200, content: { 'image/svg+xml': null } },
  },
  {
    method: 'get',
    path: '/v1/threads/{threadId}/turns/{index}/figures/{name}',
    summary:
      "A figure a cell drew (PNG), named in its execution-end event's figures[].name or, as a completion's `files` " +
      'name it, `<outputId>-figure-<n>.png`',
    response: { status: 200, content: { 'image/png': null } },
  },
  {
    method: 'get',
    path: '/v1/threads/{threadId}/turns/{index}/artifacts/{path}',
    summary: "A file the analysis wrote, by its path in the turn's `artifacts`",
    response: { status: 200, content: { 'application/octet-stream': null } },
  },
];

const componentRef = (schema: z.ZodType): Record<string, unknown> => {
  const id = z.globalRegistry.get(schema)?.id;
  return id === undefined
    ? cleanSchema(z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }))
    : { $ref: `#/components/schemas/${id}` };
};

function cleanSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _schema, $id: _id, ...rest } = schema;
  return rest;
}

/** The OpenAPI 3.1 document served at /openapi.json. */
export function buildOpenApiDocument(): Record<string, unknown> {
  const registered = z.toJSONSchema(z.globalRegistry, {
    uri: (id) => `#/components/schemas/${id}`,
    unrepresentable: 'any',
  }) as { schemas: Record<string, Record<string, unknown>> };
  const schemas = Object.fromEntries(
    Object.entries(registered.schemas).map(([id, schema]) => [id, cleanSchema(schema)]),
  );
  const paths: Record<string, Record<string, unknown>> = {};
  const errorResponse = {
    description: 'Error',
    content: { 'application/json': { schema: componentRef(errorBodySchema) } },
  };
  for (const operation of operations) {
    const parameters = [
      ...[...operation.path.matchAll(/\{(\w+)\}/g)].map((match) => ({
        name: match[1],
        in: 'path',
        required: true,
        schema: match[1] === 'index' ? { type: 'integer', minimum: 1 } : { type: 'string' },
      })),
      ...Object.entries(operation.query ?? {}).map(([name, { schema, description }]) => ({
        name,
        in: 'query',
        required: false,
        description,
        schema: componentRef(schema),
      })),
    ];
    const content = operation.response.content;
    paths[operation.path] ??= {};
    (paths[operation.path] as Record<string, unknown>)[operation.method] = {
      summary: operation.summary,
      ...(operation.description === undefined ? {} : { description: operation.description }),
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(operation.body
        ? {
            requestBody: {
              required: true,
              content: {
                [operation.body.type ?? 'application/json']: { schema: componentRef(operation.body.schema) },
              },
            },
          }
        : {}),
      responses: {
        [operation.response.status]: {
          description: operation.response.description ?? operation.summary,
          ...(content === undefined
            ? {}
            : {
                content: Object.fromEntries(
                  // No schema for bytes, text or a document described elsewhere (OpenAPI 3.1 leaves it optional).
                  Object.entries(content).map(([type, schema]) => [
                    type,
                    schema === null ? {} : { schema: componentRef(schema) },
                  ]),
                ),
              }),
        },
        '4XX': errorResponse,
        '5XX': errorResponse,
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Datalyst server',
      version: VERSION,
      description: "DeepAnalyze/OpenAI-compatible calls and Datalyst's thread/turn API.",
    },
    components: {
      schemas,
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
    },
    security: [{ bearer: [] }, {}],
    paths,
  };
}
