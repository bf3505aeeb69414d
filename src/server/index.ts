// The server's public face: start it, and the request/response/event shapes a front end imports.
export { createServerApp, startServer } from './server.ts';
export type { DatalystServer, ServerOptions } from './server.ts';
export type { EngineOptions } from './thread-engine.ts';
export { checkListenSecurity, checkPublicUrlSecurity, needsApiKey } from './auth.ts';
export { parsePublicUrl } from './route-context.ts';
export { ListenError, checkListenAddress, listenErrorOf } from './listen-address.ts';
export { DataDirInUseError, checkDataDirFree } from './data-dir-lock.ts';
export type { DataDirOwner } from './data-dir-lock.ts';
export { buildOpenApiDocument } from './openapi.ts';
export {
  turnStatusSchema,
  terminationSchema,
  artifactSchema,
  turnSchema,
  threadSchema,
  threadListSchema,
  createThreadRequestSchema,
  createTurnRequestSchema,
  threadDeletedSchema,
  reportFormatSchema,
  turnEventSchema,
  healthSchema,
} from './api-schemas.ts';
export type {
  TurnStatus,
  Artifact,
  Turn,
  Thread,
  CreateThreadRequest,
  CreateTurnRequest,
  TurnEvent,
  Health,
} from './api-schemas.ts';
export {
  fileIdSchema,
  threadIdSchema,
  fileObjectSchema,
  fileListSchema,
  chatMessageSchema,
  chatCompletionRequestSchema,
  chatCompletionSchema,
  chatCompletionChunkSchema,
  generatedFileSchema,
  modelListSchema,
  errorBodySchema,
} from './openai-schemas.ts';
export type {
  FileObject,
  ChatCompletionRequest,
  ChatCompletion,
  ChatCompletionChunk,
  GeneratedFile,
} from './openai-schemas.ts';
export type { ErrorBody } from './http-error.ts';
