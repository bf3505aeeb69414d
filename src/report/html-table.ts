import type { Table } from '../sandbox/cell-result.ts';
import { escapeHtml } from './html-escape.ts';

/**
 * A table a cell returned (a DataFrame), as HTML: every header and value is
 * escaped text; a table the sandbox cut says how much of it is shown.
 */
export function renderDataTable(table: Table): string {
  const header = `<tr><th></th>${table.columns.map((column) => `<th scope="col">${escapeHtml(column)}</th>`).join('')}</tr>`;
  const rows = table.rows
    .map(
      (row, rowIndex) =>
        `<tr><th scope="row">${escapeHtml(table.index[rowIndex] ?? '')}</th>${row.map((cell) => `<td>${escapeHtml(cell === null ? '' : String(cell))}</td>`).join('')}</tr>`,
    )
    .join('');
  const note = table.truncated
    ? `<p class="note">Showing ${table.rows.length} of ${table.totalRows.toLocaleString('en-US')} rows and ${table.columns.length} of ${table.totalColumns} columns.</p>`
    : '';
  return `<div class="table-wrap"><table class="data"><thead>${header}</thead><tbody>${rows}</tbody></table></div>${note}`;
}
