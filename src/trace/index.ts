export {
  TRACE_VERSION,
  stepKindSchema,
  terminationReasonSchema,
  usageSchema,
  inputFileSchema,
  modelInfoSchema,
  runStartSchema,
  workspaceProfileRecordSchema,
  modelTurnSchema,
  stepSchema,
  executionSchema,
  artifactSchema,
  noticeSchema,
  runEndSchema,
  traceRecordSchema,
  traceDocumentSchema,
} from './schema.ts';
export type {
  StepKind,
  TerminationReason,
  Usage,
  InputFile,
  ModelInfo,
  TraceRecord,
  RunStartRecord,
  StepRecord,
  ExecutionRecord,
  ArtifactRecord,
  NoticeRecord,
  RunEndRecord,
  ModelTurnRecord,
  TraceDocument,
} from './schema.ts';
export { TraceWriter } from './writer.ts';
export type { TraceWriterOptions } from './writer.ts';
export { readTrace, parseTraceDocument, parseTraceLines } from './reader.ts';
export type { ReadTrace, ReadTraceOptions } from './reader.ts';
