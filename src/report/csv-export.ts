import Papa from 'papaparse';
import type { Table } from '../sandbox/cell-result.ts';

/** Cells a spreadsheet would run as a formula; plain signed numbers (-2, +1.5e3) are left alone. */
export const formulaPattern = /^[=+\-@\t\r](?![0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?$)/;

/**
 * A captured table as CSV, with the index as the first column. Cells that
 * start with = + - @ tab or CR are prefixed with a quote (papaparse's
 * escapeFormulae), so opening the file in a spreadsheet never runs data.
 */
export function tableToCsv(table: Table): string {
  const header = ['', ...table.columns];
  const rows = table.rows.map((row, rowIndex) => [
    table.index[rowIndex] ?? '',
    ...row.map((cell) => (cell === null ? '' : String(cell))),
  ]);
  return Papa.unparse([header, ...rows], { escapeFormulae: formulaPattern, newline: '\n' });
}
