import type { ColumnProfile, TableProfile } from '../sandbox/workspace-profile.ts';
import { groundSegment } from '../trace/number-grounding.ts';
import type { NumberIndex } from '../trace/number-grounding.ts';
import { escapeHtml } from './html-escape.ts';
import { plural } from '../util/plural.ts';
import {
  alertLabels,
  count,
  dataTables,
  formatStatistic,
  groupMeasureDigits,
  missingShare,
  missingText,
  noTablesNote,
  shapeText,
  statsRows,
} from './data-profile-view.ts';
import type { DataAlert, DataTableView } from './data-profile-view.ts';
import type { WorkspaceProfile } from '../sandbox/workspace-profile.ts';
import type { OutputAnchor } from './safe-markdown.ts';

/**
 * The report's data section: a part per table, as profiling reports have it
 * (shape, alerts, then per column its type, distinct values, missing share,
 * range or most frequent values, and a small distribution chart drawn here as
 * inline SVG from the profile's numbers). Every column name and value is the
 * data's: escaped text. An alert's number that an execution printed links to
 * that output, like the answer's; the others come from the workspace profile.
 */
export function renderDataSection(
  profile: WorkspaceProfile | null,
  index: NumberIndex,
  anchorFor: OutputAnchor,
): string {
  const tables = dataTables(profile);
  if (tables.length === 0) {
    return `<section id="data"><h2>Data</h2><p class="note">${noTablesNote(profile)}</p>${profile === null ? '' : unreadFiles(profile)}</section>`;
  }
  const toc = tables.map((table) => `<a href="#${table.anchor}">${escapeHtml(table.label)}</a>`).join('');
  return `<section id="data"><h2>Data</h2>
<p class="data-intro">Profiled inside the sandbox before the analysis began (the <span class="mono">workspace-profile</span> record of trace.json). Numbers marked <span class="num num-verified">like this<sup>E1</sup></span> were also printed by the execution named.</p>
<nav class="data-toc" aria-label="Tables">${toc}</nav>
${tables.map((table) => renderTable(table, index, anchorFor)).join('\n')}
${unreadFiles(profile)}
</section>`;
}

function unreadFiles(profile: WorkspaceProfile | null): string {
  const failed = (profile?.files ?? []).filter((file) => file.tables.length === 0);
  if (failed.length === 0) return '';
  const items = failed
    .map(
      (file) =>
        `<li><span class="mono">${escapeHtml(file.path)}</span> (${escapeHtml(file.format)}): ${escapeHtml(file.error ?? 'no table in it')}</li>`,
    )
    .join('');
  return `<h3>Files without a table</h3><ul class="reading-notes">${items}</ul>`;
}

function renderTable(view: DataTableView, index: NumberIndex, anchorFor: OutputAnchor): string {
  const { table } = view;
  const sampled =
    statsRows(table) < table.rows
      ? `<p class="note">Column statistics come from ${count(statsRows(table), 'row')} of the ${table.rows.toLocaleString('en-US')}.</p>`
      : '';
  const alerts =
    view.alerts.length === 0
      ? '<p class="alerts-none">No alerts.</p>'
      : `<ul class="alerts">${view.alerts.map((alert) => renderAlert(alert, index, anchorFor)).join('')}</ul>`;
  const rows = table.columns.map((column) => renderColumn(column, table)).join('');
  return `<article class="data-table" id="${view.anchor}">
<h3><span class="mono">${escapeHtml(view.label)}</span></h3>
<p class="shape">${escapeHtml(shapeText(table))}</p>${sampled}
${alerts}
<div class="table-wrap columns-wrap"><table class="columns"><thead><tr><th scope="col">Column</th><th scope="col">Type</th><th scope="col">Distinct</th><th scope="col">Missing</th><th scope="col">Values</th><th scope="col">Distribution</th></tr></thead><tbody>${rows}</tbody></table></div>${firstRows(table)}
</article>`;
}

/** The profile's first rows (absent from older traces), every cell the data's text; a missing cell is left empty. */
function firstRows(table: TableProfile): string {
  const rows = table.sampleRows ?? [];
  if (rows.length === 0) return '';
  const header = table.columns.map((column) => `<th scope="col">${escapeHtml(column.name)}</th>`).join('');
  const body = rows
    .map(
      (row) =>
        `<tr>${table.columns.map((_, position) => `<td>${escapeHtml(row[position] ?? '')}</td>`).join('')}</tr>`,
    )
    .join('');
  // Folded, like the process: the section stays short; print opens every <details>.
  return `
<details class="first-rows"><summary>First ${count(rows.length, 'row')}${table.columnsTruncated ? ' (profiled columns)' : ''}</summary><div class="table-wrap"><table class="first-rows"><thead><tr>${header}</tr></thead><tbody>${body}</tbody></table></div></details>`;
}

function renderAlert(alert: DataAlert, index: NumberIndex, anchorFor: OutputAnchor): string {
  return `<li class="alert alert-${alert.kind}"><span class="alert-kind">${escapeHtml(alertLabels[alert.kind])}</span> ${groundedText(alert.text, index, anchorFor)}</li>`;
}

/** Plain text with each number an execution printed linked to that output; nothing else is marked. */
export function groundedText(text: string, index: NumberIndex, anchorFor: OutputAnchor): string {
  let html = '';
  let position = 0;
  for (const number of groundSegment(text, index)) {
    if (!number.verified || number.outputId === null) continue;
    html += escapeHtml(text.slice(position, number.start));
    const title = `Also printed by output ${number.outputId} (${number.matchedText ?? ''})`;
    html += `<a class="num num-verified" href="#${escapeHtml(anchorFor(number.outputId))}" title="${escapeHtml(title)}">${escapeHtml(text.slice(number.start, number.end))}<sup>${escapeHtml(number.outputId)}</sup></a>`;
    position = number.end;
  }
  return html + escapeHtml(text.slice(position));
}

function renderColumn(column: ColumnProfile, table: TableProfile): string {
  const share = missingShare(column, table);
  const missing = missingText(column, table);
  return `<tr><th scope="row" class="mono">${escapeHtml(column.name)}</th><td data-label="Type"><span class="type type-${column.kind}">${escapeHtml(column.kind)}</span> <span class="dtype">${escapeHtml(column.dtype)}</span></td><td data-label="Distinct">${column.unique === null ? '' : column.unique.toLocaleString('en-US')}</td><td data-label="Missing"${share >= 0.05 ? ' class="warn"' : ''}>${escapeHtml(missing)}</td><td class="values">${valuesCell(column)}</td><td class="spark">${distribution(column)}</td></tr>`;
}

function valuesCell(column: ColumnProfile): string {
  if (column.mean !== undefined && column.mean !== null) {
    return `<span class="stat"><span class="stat-name">min</span> ${escapeHtml(groupMeasureDigits(column.min))}</span><span class="stat"><span class="stat-name">max</span> ${escapeHtml(groupMeasureDigits(column.max))}</span><span class="stat"><span class="stat-name">mean</span> ${escapeHtml(formatStatistic(column.mean))}</span>`;
  }
  if (column.topValues !== undefined && column.topValues.length > 0 && !allDistinct(column)) {
    return column.topValues
      .slice(0, 3)
      .map(
        (top) =>
          // The count in brackets and muted, as report.md writes it: "0 3" read as two values; the title
          // holds both when a long value is cut off at the cell's edge.
          `<span class="top" title="${escapeHtml(`${top.value}: ${plural(top.count, 'row')}`)}"><span class="mono">${escapeHtml(top.value)}</span> <span class="stat-name">(${top.count.toLocaleString('en-US')})</span></span>`,
      )
      .join('');
  }
  if (column.min !== null || column.max !== null) {
    return `<span class="stat"><span class="stat-name">from</span> ${escapeHtml(column.min ?? '')}</span><span class="stat"><span class="stat-name">to</span> ${escapeHtml(column.max ?? '')}</span>`;
  }
  const unique =
    allDistinct(column) && column.topValues !== undefined
      ? '<span class="stat-name">every value distinct, e.g.</span> '
      : '';
  return (
    unique + column.samples.map((sample) => `<span class="top mono">${escapeHtml(sample)}</span>`).join('')
  );
}

/** Every value occurs once (an identifier): its most frequent values say nothing. */
function allDistinct(column: ColumnProfile): boolean {
  return (column.topValues ?? []).every((top) => top.count <= 1);
}

const SPARK_WIDTH = 120;
const SPARK_HEIGHT = 32;

/** A histogram (numbers) or bars of the most frequent values, as inline SVG. */
function distribution(column: ColumnProfile): string {
  const histogram = column.histogram;
  if (histogram !== undefined && histogram.counts.length > 0) {
    const highest = Math.max(1, ...histogram.counts);
    const width = SPARK_WIDTH / histogram.counts.length;
    const bars = histogram.counts
      .map((value, position) => {
        const height = value === 0 ? 0 : Math.max(1, (value / highest) * (SPARK_HEIGHT - 2));
        return `<rect x="${(position * width + 0.5).toFixed(2)}" y="${(SPARK_HEIGHT - height).toFixed(2)}" width="${(width - 1).toFixed(2)}" height="${height.toFixed(2)}"/>`;
      })
      .join('');
    const label = `Histogram of ${column.name} from ${formatStatistic(histogram.low)} to ${formatStatistic(histogram.high)}: ${histogram.counts.join(', ')}`;
    return `<svg class="spark" viewBox="0 0 ${SPARK_WIDTH} ${SPARK_HEIGHT}" width="${SPARK_WIDTH}" height="${SPARK_HEIGHT}" role="img" aria-label="${escapeHtml(label)}"><title>${escapeHtml(label)}</title>${bars}</svg>`;
  }
  const top = column.topValues;
  if (top !== undefined && top.length > 0 && !allDistinct(column)) {
    const highest = Math.max(1, ...top.map((value) => value.count));
    const rowHeight = SPARK_HEIGHT / 5;
    const bars = top
      .slice(0, 5)
      .map(
        (value, position) =>
          `<rect x="0" y="${(position * rowHeight + 0.5).toFixed(2)}" width="${Math.max(1, (value.count / highest) * SPARK_WIDTH).toFixed(2)}" height="${(rowHeight - 1).toFixed(2)}"><title>${escapeHtml(`${value.value}: ${value.count}`)}</title></rect>`,
      )
      .join('');
    const label = `Most frequent values of ${column.name}`;
    return `<svg class="spark spark-top" viewBox="0 0 ${SPARK_WIDTH} ${SPARK_HEIGHT}" width="${SPARK_WIDTH}" height="${SPARK_HEIGHT}" role="img" aria-label="${escapeHtml(label)}">${bars}</svg>`;
  }
  return '';
}
