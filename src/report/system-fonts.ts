import { readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * The font files resvg rasterizes chart text with, listed once per process.
 *
 * resvg-js builds a new font database for every image it renders: with
 * `loadSystemFonts` it reads fontconfig's configuration (about 35 files) and
 * walks the font folders again each time (about a tenth of a small chart's
 * PNG CPU on a machine with 34 font files, more with more fonts). Handing it
 * the same files as a list skips that and draws the same pixels
 * (`test/report/system-fonts.test.ts`).
 *
 * Linux only, where the folders are those fontconfig's default configuration
 * names; elsewhere, or when no font is found, null: resvg searches itself.
 */
const FONT_FILE = /\.(?:ttf|ttc|otf|otc)$/i;
// Fonts are not nested deeper than this in any distribution's layout; a bound keeps a link loop from hanging the worker.
const MAX_DEPTH = 6;

let listed: readonly string[] | null | undefined;

export function systemFontFiles(): readonly string[] | null {
  if (listed === undefined) listed = process.platform === 'linux' ? linuxFontFiles() : null;
  return listed;
}

function linuxFontFiles(): readonly string[] | null {
  const home = process.env.HOME ?? homedir();
  const dataHome = process.env.XDG_DATA_HOME ?? join(home, '.local/share');
  const folders = [
    '/usr/share/fonts',
    '/usr/local/share/fonts',
    join(home, '.fonts'),
    join(dataHome, 'fonts'),
  ];
  const files = new Set<string>();
  for (const folder of folders) collect(folder, 0, files);
  return files.size === 0 ? null : [...files].sort();
}

function collect(folder: string, depth: number, files: Set<string>): void {
  if (depth > MAX_DEPTH) return;
  let entries;
  try {
    entries = readdirSync(folder, { withFileTypes: true });
  } catch {
    return; // a folder that does not exist or cannot be read has no fonts for us
  }
  for (const entry of entries) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) collect(path, depth + 1, files);
    else if ((entry.isFile() || entry.isSymbolicLink()) && FONT_FILE.test(entry.name)) files.add(path);
  }
}
