export {
  TRACE_VERSION,
  traceVersionSchema,
  turnStartSchema,
  turnEndSchema,
  replaySchema,
  workspaceChangeSchema,
  stepKindSchema,
  terminationReasonSchema,
  usageSchema,
  inputFileSchema,
  modelInfoSchema,
  runStartSchema,
  workspaceProfileRecordSchema,
  modelTurnSchema,
  stepSchema,
  omittedFigureSchema,
  omittedChartSchema,
  traceCellResultSchema,
  noticeKindSchema,
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
  OmittedFigure,
  OmittedChart,
  TraceCellResult,
  NoticeKind,
  ExecutionRecord,
  ArtifactRecord,
  NoticeRecord,
  RunEndRecord,
  ModelTurnRecord,
  TurnStartRecord,
  TurnEndRecord,
  ReplayRecord,
  WorkspaceChangeRecord,
  TraceVersion,
  TraceDocument,
} from './schema.ts';
export { TraceWriter } from './writer.ts';
export type { TraceWriterOptions } from './writer.ts';
export { readTrace, parseTraceDocument, parseTraceLines } from './reader.ts';
export type { ReadTrace, ReadTraceOptions } from './reader.ts';
export { splitTurns } from './turns.ts';
export { inputFileHistory, currentInputFiles } from './input-files.ts';
export type { InputFileEntry } from './input-files.ts';
export type { TraceTurn } from './turns.ts';
export {
  findNumberMentions,
  buildNumberIndex,
  groundMention,
  groundSegment,
  summarizeGrounding,
  printedNumbers,
  NumberIndex,
  MAX_SOURCE_NUMBERS,
} from './number-grounding.ts';
export type {
  NumberMention,
  GroundedNumber,
  GroundingSource,
  SegmentContext,
  GroundingSummary,
  PrintedNumber,
} from './number-grounding.ts';
export { groundingSources, groundingSource } from './grounding-sources.ts';
export type { GroundedResult } from './grounding-sources.ts';
export { cleanOutputText } from './output-text.ts';
