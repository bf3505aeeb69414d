import type { ColumnProfile } from '../sandbox/workspace-profile.ts';
import type { WorkspaceProfile } from '../sandbox/workspace-profile.ts';
import {
  alertLabels,
  count,
  dataTables,
  formatStatistic,
  groupMeasureDigits,
  missingText,
  noTablesNote,
  shapeText,
  statsRows,
} from './data-profile-view.ts';
import { escapeMarkdownText } from './markdown-text.ts';

/** The data section of `report.md`: per table its shape, alerts and a table of columns (distributions as block characters). */
export function dataSectionMarkdown(profile: WorkspaceProfile | null): string[] {
  const tables = dataTables(profile);
  const lines = ['## Data', ''];
  if (tables.length === 0) {
    lines.push(`*${noTablesNote(profile)}*`, '', ...unreadFiles(profile));
    return lines;
  }
  lines.push(
    '*Profiled inside the sandbox before the analysis began (the `workspace-profile` record of trace.json).*',
    '',
  );
  for (const { label, table, alerts } of tables) {
    lines.push(
      `### ${escapeMarkdownText(label)}`,
      '',
      `${shapeText(table)}${statsRows(table) < table.rows ? ` · statistics from ${count(statsRows(table), 'row')}` : ''}`,
      '',
    );
    if (alerts.length > 0) {
      lines.push(
        ...alerts.map((alert) => `- **${alertLabels[alert.kind]}:** ${escapeMarkdownText(alert.text)}`),
        '',
      );
    }
    lines.push(
      '| Column | Type | Distinct | Missing | Values | Distribution |',
      '| --- | --- | ---: | ---: | --- | --- |',
    );
    for (const column of table.columns) {
      lines.push(
        `| ${escapeMarkdownText(column.name)} | ${column.kind} (${escapeMarkdownText(column.dtype)}) | ${column.unique === null ? '' : column.unique.toLocaleString('en-US')} | ${missingText(column, table)} | ${escapeMarkdownText(values(column))} | ${blocks(column)} |`,
      );
    }
    lines.push('');
  }
  lines.push(...unreadFiles(profile));
  return lines;
}

/** The files that gave no table and why, as the HTML report lists them (a damaged file's reader error). */
function unreadFiles(profile: WorkspaceProfile | null): string[] {
  const failed = (profile?.files ?? []).filter((file) => file.tables.length === 0);
  if (failed.length === 0) return [];
  return [
    '### Files without a table',
    '',
    ...failed.map(
      (file) =>
        `- ${escapeMarkdownText(file.path)} (${file.format}): ${escapeMarkdownText(file.error ?? 'no table in it')}`,
    ),
    '',
  ];
}

function values(column: ColumnProfile): string {
  if (column.mean !== undefined && column.mean !== null)
    return `min ${groupMeasureDigits(column.min)}, max ${groupMeasureDigits(column.max)}, mean ${formatStatistic(column.mean)}`;
  const top = column.topValues ?? [];
  if (top.length > 0 && top.some((value) => value.count > 1))
    return top
      .slice(0, 3)
      .map((value) => `${value.value} (${value.count.toLocaleString('en-US')})`)
      .join(', ');
  if (column.min !== null || column.max !== null) return `${column.min ?? ''} to ${column.max ?? ''}`;
  return column.samples.join(', ');
}

const BLOCKS = '▁▂▃▄▅▆▇█';

/** A histogram as block characters (▁▃█…). */
function blocks(column: ColumnProfile): string {
  const counts = column.histogram?.counts ?? [];
  if (counts.length === 0) return '';
  const highest = Math.max(1, ...counts);
  return counts
    .map((value) => (value === 0 ? ' ' : BLOCKS[Math.min(7, Math.floor((value / highest) * 7.999))]))
    .join('')
    .replace(/ /g, '\u2007');
}
