import type { ReadOptions } from '../../src/sandbox/index.ts';

/** How the profile says a plain comma-separated UTF-8 file with a header row was read. */
export function csvReadOptions(): ReadOptions {
  return {
    encoding: 'utf-8',
    delimiter: ',',
    headerRow: 0,
    skipRows: 0,
    sheet: null,
    table: null,
    decimal: null,
    thousands: null,
    naValues: [],
  };
}
