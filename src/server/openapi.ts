import { z } from 'zod';
import { VERSION } from '../version.ts';
import {
  createThreadRequestSchema,
  createTurnRequestSchema,
  threadDeletedSchema,
  threadListSchema,
  threadProfileSchema,
  threadSchema,
  turnEventSchema,
  turnSchema,
} from './api-schemas.ts';
import {
  chatCompletionRequestSchema,
  chatCompletionSchema,
  errorBodySchema,
  fileDeletedSchema,
  fileListSchema,
  fileObjectSchema,
  modelListSchema,
} from './openai-schemas.ts';

interface Operation {
  method: 'get' | 'post' | 'delete';
  path: string;
  summary: string;
  body?: { schema: z.ZodType; type?: string };
  response: { status: number; schema?: z.ZodType; type?: string; description?: string };
  query?: Record<string, string>;
}

const sse = 'text/event-stream';

/** Every route, with the zod schemas the handlers parse with: the document cannot drift from the code. */
const operations: Operation[] = [
  {
    method: 'get',
    path: '/health',
    summary: 'Liveness and load',
    response: { status: 200, description: 'status, turns running and queued' },
  },
  {
    method: 'get',
    path: '/v1/models',
    summary: 'The configured model',
    response: { status: 200, schema: modelListSchema },
  },
  {
    method: 'post',
    path: '/v1/files',
    summary: 'Upload a data file (multipart field `file`, optional `purpose`)',
    body: {
      schema: z.object({ file: z.string().meta({ format: 'binary' }), purpose: z.string().optional() }),
      type: 'multipart/form-data',
    },
    response: { status: 200, schema: fileObjectSchema },
  },
  {
    method: 'get',
    path: '/v1/files',
    summary: 'List uploaded files',
    response: { status: 200, schema: fileListSchema },
  },
  {
    method: 'get',
    path: '/v1/files/{id}',
    summary: 'A file object',
    response: { status: 200, schema: fileObjectSchema },
  },
  {
    method: 'get',
    path: '/v1/files/{id}/content',
    summary: "A file's bytes",
    response: { status: 200, type: 'application/octet-stream' },
  },
  {
    method: 'delete',
    path: '/v1/files/{id}',
    summary: 'Delete a file',
    response: { status: 200, schema: fileDeletedSchema },
  },
  {
    method: 'post',
    path: '/v1/chat/completions',
    summary: 'DeepAnalyze-compatible analysis; `stream: true` answers with chat.completion.chunk events',
    body: { schema: chatCompletionRequestSchema },
    response: {
      status: 200,
      schema: chatCompletionSchema,
      description: `JSON, or ${sse} of ChatCompletionChunk then [DONE]`,
    },
  },
  {
    method: 'post',
    path: '/v1/threads',
    summary: 'Create a thread over uploaded files',
    body: { schema: createThreadRequestSchema },
    response: { status: 201, schema: threadSchema },
  },
  {
    method: 'get',
    path: '/v1/threads',
    summary: 'List threads',
    response: { status: 200, schema: threadListSchema },
  },
  {
    method: 'get',
    path: '/v1/threads/{threadId}',
    summary: 'A thread with its turns',
    response: { status: 200, schema: threadSchema },
  },
  {
    method: 'delete',
    path: '/v1/threads/{threadId}',
    summary: 'Delete a thread (cancels its turn)',
    response: { status: 200, schema: threadDeletedSchema },
  },
  {
    method: 'get',
    path: '/v1/threads/{threadId}/profile',
    summary: "The thread's files profiled in the sandbox before any question",
    response: { status: 200, schema: threadProfileSchema },
  },
  {
    method: 'post',
    path: '/v1/threads/{threadId}/turns',
    summary: 'Ask a question (queued; follow events_url)',
    body: { schema: createTurnRequestSchema },
    response: { status: 202, schema: turnSchema },
  },
  {
    method: 'get',
    path: '/v1/threads/{threadId}/turns/{index}',
    summary: 'A turn',
    response: { status: 200, schema: turnSchema },
  },
  {
    method: 'get',
    path: '/v1/threads/{threadId}/turns/{index}/events',
    summary: "The turn's events as SSE (id = seq); re-attach with Last-Event-ID or ?after=",
    query: { after: 'integer' },
    response: { status: 200, schema: turnEventSchema, type: sse },
  },
  {
    method: 'post',
    path: '/v1/threads/{threadId}/turns/{index}/cancel',
    summary: 'Cancel a queued or running turn',
    response: { status: 200, schema: turnSchema },
  },
  {
    method: 'get',
    path: '/v1/threads/{threadId}/turns/{index}/report',
    summary: "The turn's report",
    query: { format: 'html|md|ipynb|json' },
    response: { status: 200, type: 'text/html' },
  },
  {
    method: 'get',
    path: '/v1/threads/{threadId}/report',
    summary: 'The report of the latest ended turn',
    query: { format: 'html|md|ipynb|json' },
    response: { status: 200, type: 'text/html' },
  },
  {
    method: 'get',
    path: '/v1/threads/{threadId}/turns/{index}/figures/{name}',
    summary: "A figure a cell drew (PNG), named in its execution-end event's figures[].name",
    response: { status: 200, type: 'image/png' },
  },
  {
    method: 'get',
    path: '/v1/threads/{threadId}/turns/{index}/artifacts/{path}',
    summary: 'A file the analysis wrote',
    response: { status: 200, type: 'application/octet-stream' },
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
        schema: { type: 'string' },
      })),
      ...Object.entries(operation.query ?? {}).map(([name, description]) => ({
        name,
        in: 'query',
        required: false,
        description,
        schema: { type: 'string' },
      })),
    ];
    const responseType = operation.response.type ?? 'application/json';
    paths[operation.path] ??= {};
    (paths[operation.path] as Record<string, unknown>)[operation.method] = {
      summary: operation.summary,
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
          ...(operation.response.schema || operation.response.type
            ? {
                content: {
                  [responseType]: {
                    schema: operation.response.schema
                      ? componentRef(operation.response.schema)
                      : { type: 'string' },
                  },
                },
              }
            : {}),
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
