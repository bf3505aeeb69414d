export {
  renderReport,
  renderRunFolder,
  allReportFormats,
  readEmbeddableImages,
  findTrace,
} from './render-report.ts';
export type {
  ReportFormat,
  RenderReportOptions,
  RenderRunFolderOptions,
  RenderedReport,
} from './render-report.ts';
export type { ReportAudience } from './outcome-look.ts';
export { prepareReport, outputAnchor } from './prepared-report.ts';
export { groundingSources } from '../trace/grounding-sources.ts';
export type {
  PreparedReport,
  PreparedFigure,
  PrepareOptions,
  ConversationGrounding,
} from './prepared-report.ts';
export { renderHtmlReport, reportContentSecurityPolicy } from './html-report.ts';
export type { HtmlReportOptions, ArtifactImages } from './html-report.ts';
export { renderMarkdownReport } from './markdown-report.ts';
export type { MarkdownReport, MarkdownReportOptions, ReportAsset } from './markdown-report.ts';
export { renderNotebook } from './notebook.ts';
export { notebookSchema } from './notebook-schema.ts';
export type { Notebook, NotebookCell, NotebookOutput } from './notebook-schema.ts';
export { DEFAULT_MAX_CHART_ROWS, MAX_CHART_SVG_BYTES } from './rendered-chart.ts';
export { ChartPool, backgroundChartPool, chartCacheKey, sharedChartPool } from './chart-pool.ts';
export { ChartDiskCache } from './chart-disk-cache.ts';
export type { ChartPoolOptions, ChartJobOptions } from './chart-pool.ts';
export type { RenderedChart } from './rendered-chart.ts';
export {
  buildNumberIndex,
  findNumberMentions,
  groundMention,
  groundSegment,
  summarizeGrounding,
} from '../trace/number-grounding.ts';
export type {
  GroundedNumber,
  GroundingSource,
  GroundingSummary,
  NumberIndex,
  NumberMention,
  SegmentContext,
} from '../trace/number-grounding.ts';
export { groundAnswerSegments } from './safe-markdown.ts';
export type { GroundedSegment } from './safe-markdown.ts';
export { buildRunView } from './run-view.ts';
export type { RunView, RunOutcome, ProcessEntry } from './run-view.ts';
export { tableToCsv } from './csv-export.ts';
export { renderChartFiles, chartFileFormats } from './chart-files.ts';
export type { ChartFileFormat, ChartFileResult, RenderChartFilesOptions } from './chart-files.ts';
export { PdfPrinter, DEFAULT_CHROMIUM_PATH } from './pdf.ts';
export type { PdfPrinterOptions, PdfPageSize } from './pdf.ts';
export { comparableCellCount, compareNotebooks } from './notebook-diff.ts';
export type { NotebookComparison, NotebookCellDifference } from './notebook-diff.ts';
export { renderDeepRunFolder, allDeepReportFormats } from './render-deep-report.ts';
export { renderDeepNotebook } from './deep-notebook.ts';
export type {
  DeepReportFormat,
  RenderDeepRunFolderOptions,
  RenderedDeepReport,
} from './render-deep-report.ts';
export { prepareDeepReport } from './deep-run.ts';
export type { PreparedDeepReport, PrepareDeepOptions } from './deep-run.ts';
export { renderDeepHtmlReport } from './deep-report.ts';
export { renderDeepMarkdownReport } from './deep-markdown-report.ts';
