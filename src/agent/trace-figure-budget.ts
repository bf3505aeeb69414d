import type { CellResult } from '../sandbox/cell-result.ts';
import type { TraceCellResult } from '../trace/schema.ts';

/** Default cap on figure and chart bytes kept in one run's trace: 96 MiB. */
export const defaultMaxTraceFigureBytes = 96 * 1024 * 1024;

/** What a cell's result lost on its way into the trace. */
export interface OmittedOutputs {
  figures: number;
  charts: number;
  bytes: number;
}

/**
 * The run's cap on the bytes of figures (base64 PNG) and charts (vega-lite
 * JSON with its data) kept in the trace. One cell may produce tens of
 * megabytes of them; kept whole over a long run, they make a trace that no
 * reader can load (and a run-end that cannot be written). Past the cap, a
 * figure or chart keeps its place, id and size in the trace, not its data
 * (`omitted: true`). The budget is spent in order: a small figure after a
 * large omitted one is still kept if it fits.
 */
export class TraceFigureBudget {
  private remainingBytes: number;

  constructor(readonly maxBytes: number) {
    this.remainingBytes = maxBytes;
  }

  /** The result as the trace keeps it, and what was left out. */
  keep(result: CellResult): { result: TraceCellResult; omitted: OmittedOutputs } {
    const omitted: OmittedOutputs = { figures: 0, charts: 0, bytes: 0 };
    if (result.figures.length === 0 && result.charts.length === 0) return { result, omitted };
    const figures: TraceCellResult['figures'] = result.figures.map((figure) => {
      const sizeBytes = figure.dataBase64.length;
      if (this.spend(sizeBytes)) return figure;
      omitted.figures += 1;
      omitted.bytes += sizeBytes;
      return { ...figure, dataBase64: '', omitted: true, sizeBytes };
    });
    const charts: TraceCellResult['charts'] = result.charts.map((chart) => {
      const sizeBytes = Buffer.byteLength(JSON.stringify(chart.spec), 'utf8');
      if (this.spend(sizeBytes)) return chart;
      omitted.charts += 1;
      omitted.bytes += sizeBytes;
      return { id: chart.id, spec: {}, omitted: true, sizeBytes };
    });
    return { result: { ...result, figures, charts }, omitted };
  }

  private spend(sizeBytes: number): boolean {
    if (sizeBytes > this.remainingBytes) return false;
    this.remainingBytes -= sizeBytes;
    return true;
  }
}
