import { extname } from 'node:path';
import * as vega from 'vega';
import type { ChartSource } from './chart-worker-protocol.ts';

/**
 * Turns the files of `datalyst chart` into a spec, inside a chart worker:
 * the spec's JSON and the data file are parsed here, under the worker's heap
 * and time limits, never in the process that asked. Data is parsed by vega's
 * own readers (d3-dsv for CSV/TSV, with vega's type inference), so a CSV
 * given with `--data` reads as the same CSV loaded by `data.url` in vega
 * would; it is parsed, never run.
 */
export type SpecFromSource = { spec: unknown; error: null } | { spec: null; error: string };

const dataTypes: Record<string, 'csv' | 'tsv' | 'json'> = { '.csv': 'csv', '.tsv': 'tsv', '.json': 'json' };

export function specFromSource(source: ChartSource): SpecFromSource {
  let spec: unknown;
  try {
    spec = JSON.parse(source.specText);
  } catch (error) {
    return { spec: null, error: `The spec file is not valid JSON: ${messageOf(error)}` };
  }
  if (!isRecord(spec)) return { spec: null, error: 'The spec file does not hold a JSON object.' };
  if (source.data === undefined) return { spec, error: null };

  const type = dataTypes[extname(source.data.fileName).toLowerCase()];
  if (type === undefined)
    return { spec: null, error: 'The data file must be .csv, .tsv or .json (told by its extension).' };
  let rows: unknown[];
  try {
    // 'auto' infers numbers, booleans and dates per column as vega does for a loaded file.
    const read: unknown = vega.read(source.data.text, { type, parse: 'auto' });
    if (!Array.isArray(read))
      return { spec: null, error: 'The JSON data file does not hold an array of rows.' };
    rows = read;
  } catch (error) {
    return {
      spec: null,
      error: `The data file could not be read as ${type.toUpperCase()}: ${messageOf(error)}`,
    };
  }
  return bindData(spec, rows);
}

/**
 * Puts the rows in place of the spec's top-level data: vega-lite's `data`
 * (its name kept, any url or format dropped), or a plain vega spec's first
 * dataset that loads a url.
 */
function bindData(spec: Record<string, unknown>, rows: unknown[]): SpecFromSource {
  if (Array.isArray(spec.data)) {
    const index = spec.data.findIndex((entry) => isRecord(entry) && typeof entry.url === 'string');
    const target: unknown = spec.data[index];
    if (index < 0 || !isRecord(target))
      return { spec: null, error: 'The vega spec has no dataset with a url for the data file to replace.' };
    const data = [...spec.data];
    data[index] = { name: target.name, values: rows };
    return { spec: { ...spec, data }, error: null };
  }
  const name = isRecord(spec.data) && typeof spec.data.name === 'string' ? { name: spec.data.name } : {};
  return { spec: { ...spec, data: { ...name, values: rows } }, error: null };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
