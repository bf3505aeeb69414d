import type { ColumnProfile, TableProfile, WorkspaceProfile } from '../sandbox/workspace-profile.ts';

/**
 * The workspace profile (computed inside the sandbox, recorded in the trace)
 * folded into what the report's data section shows: per table its shape and
 * alerts, per column its statistics. Pure: the text is data, never HTML.
 */

export type DataAlertKind =
  'correlation' | 'skewed' | 'constant' | 'high-cardinality' | 'duplicates' | 'missing' | 'empty';

export interface DataAlert {
  kind: DataAlertKind;
  /** The columns concerned (none for duplicate rows). */
  columns: string[];
  /** One sentence, plain text. */
  text: string;
}

export interface DataTableView {
  /** `orders.csv` or `plan.xlsx [Products]`. */
  label: string;
  /** An anchor id for the table's heading. */
  anchor: string;
  file: string;
  table: TableProfile;
  alerts: DataAlert[];
}

/** A correlation at least this strong (in size) is an alert, as in ydata-profiling. */
export const STRONG_CORRELATION = 0.9;
/** |skewness| at least this is an alert (the offline analyst calls it strongly skewed). */
export const STRONG_SKEW = 1;
/** A text or category column with more distinct values than this is high-cardinality. */
export const HIGH_CARDINALITY = 50;
/** A column missing at least this share of its values is an alert. */
export const MANY_MISSING = 0.05;

export function dataTables(profile: WorkspaceProfile | null): DataTableView[] {
  if (profile === null) return [];
  const tables: DataTableView[] = [];
  for (const file of profile.files) {
    for (const table of file.tables) {
      const label = table.name === '' ? file.path : `${file.path} [${table.name}]`;
      tables.push({
        label,
        anchor: `data-${tables.length + 1}`,
        file: file.path,
        table,
        alerts: tableAlerts(table),
      });
    }
  }
  return tables;
}

/** The rows the column statistics come from (the profile reads at most 200 000 rows of a big file). */
export function statsRows(table: TableProfile): number {
  return table.statsRows ?? table.rows;
}

export function missingShare(column: ColumnProfile, table: TableProfile): number {
  const rows = statsRows(table);
  return rows === 0 ? 0 : column.missing / rows;
}

export function tableAlerts(table: TableProfile): DataAlert[] {
  const alerts: DataAlert[] = [];
  const rows = statsRows(table);
  if (table.duplicateRows !== undefined && table.duplicateRows !== null && table.duplicateRows > 0) {
    alerts.push({
      kind: 'duplicates',
      columns: [],
      text: `${count(table.duplicateRows, 'row')} (${percent(table.duplicateRows / Math.max(1, rows))}) ${table.duplicateRows === 1 ? 'repeats' : 'repeat'} an earlier row.`,
    });
  }
  for (const pair of table.correlations ?? []) {
    if (Math.abs(pair.r) < STRONG_CORRELATION) continue;
    alerts.push({
      kind: 'correlation',
      columns: [pair.a, pair.b],
      text: `${pair.a} and ${pair.b} are strongly correlated (r = ${pair.r.toFixed(2)}).`,
    });
  }
  for (const column of table.columns) {
    const present = rows - column.missing;
    if (column.kind === 'empty' || (rows > 0 && present === 0)) {
      alerts.push({ kind: 'empty', columns: [column.name], text: `${column.name} is empty in every row.` });
      continue;
    }
    if (column.unique === 1 && rows > 1) {
      const value = column.samples[0];
      alerts.push({
        kind: 'constant',
        columns: [column.name],
        text: `${column.name} is constant${value === undefined ? '' : ` (always ${value})`}.`,
      });
    }
    const share = missingShare(column, table);
    if (share >= MANY_MISSING) {
      alerts.push({
        kind: 'missing',
        columns: [column.name],
        text: `${column.name} is missing in ${count(column.missing, 'row')} (${percent(share)}).`,
      });
    }
    if (
      column.skewness !== undefined &&
      column.skewness !== null &&
      Math.abs(column.skewness) >= STRONG_SKEW
    ) {
      alerts.push({
        kind: 'skewed',
        columns: [column.name],
        text: `${column.name} is skewed ${column.skewness > 0 ? 'right' : 'left'} (skewness ${column.skewness.toFixed(2)}).`,
      });
    }
    if (
      (column.kind === 'category' || column.kind === 'text') &&
      column.unique !== null &&
      column.unique > HIGH_CARDINALITY
    ) {
      alerts.push({
        kind: 'high-cardinality',
        columns: [column.name],
        text: `${column.name} has ${count(column.unique, 'distinct value')}: high cardinality.`,
      });
    }
  }
  return alerts;
}

export const alertLabels: Record<DataAlertKind, string> = {
  correlation: 'Correlated',
  skewed: 'Skewed',
  constant: 'Constant',
  'high-cardinality': 'High cardinality',
  duplicates: 'Duplicates',
  missing: 'Missing',
  empty: 'Empty',
};

export function count(value: number, noun: string): string {
  return `${value.toLocaleString('en-US')} ${noun}${value === 1 ? '' : 's'}`;
}

export function percent(share: number): string {
  const value = share * 100;
  if (value > 0 && value < 0.1) return '<0.1%';
  return `${value >= 10 ? value.toFixed(0) : value.toFixed(1)}%`;
}

/**
 * A measure's min or max as the profile wrote it, with thousands separators
 * like the mean beside it ("17,531", not "17531"); the digits are grouped as
 * text (never rounded through a float); anything but a plain decimal as written.
 */
export function groupMeasureDigits(text: string | null): string {
  const plain = /^(-?)(\d+)(\.\d+)?$/.exec(text ?? '');
  if (plain === null) return text ?? '';
  const [, sign = '', whole = '', fraction = ''] = plain;
  return `${sign}${whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}${fraction}`;
}

/** A number for a table cell: at most 4 significant digits past the point, thousands separated. */
export function formatStatistic(value: number | null | undefined): string {
  if (value === null || value === undefined) return '';
  const rounded = Math.abs(value) >= 1000 ? Math.round(value) : Number(value.toPrecision(4));
  return rounded.toLocaleString('en-US', { maximumFractionDigits: 4 });
}

/** Why the data section has no table to show (plain text). */
export function noTablesNote(profile: WorkspaceProfile | null): string {
  return profile === null
    ? 'The trace holds no workspace profile.'
    : 'No file of the workspace held a table that could be read.';
}

/** `1,204 rows × 8 columns · 3 duplicate rows` (plain text). */
export function shapeText(table: TableProfile): string {
  const duplicates =
    table.duplicateRows === undefined || table.duplicateRows === null
      ? ''
      : ` · ${count(table.duplicateRows, 'duplicate row')}`;
  return `${count(table.rows, 'row')} × ${count(table.columns.length, 'column')}${table.columnsTruncated ? ' profiled (the table has more)' : ''}${duplicates}`;
}

/** `0`, or `12 (1.0%)`: a column's missing values. */
export function missingText(column: ColumnProfile, table: TableProfile): string {
  return column.missing === 0
    ? '0'
    : `${column.missing.toLocaleString('en-US')} (${percent(missingShare(column, table))})`;
}
