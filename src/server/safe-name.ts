import path from 'node:path';
import { hasControlCharacters } from '../sandbox/index.ts';
import { badRequest, unsupportedType } from './http-error.ts';

/** Extensions the analysis reads; anything else is refused with 415. */
export const dataFileExtensions: readonly string[] = [
  '.csv',
  '.tsv',
  '.txt',
  '.json',
  '.jsonl',
  '.xlsx',
  '.xls',
  '.sqlite',
  '.sqlite3',
  '.db',
  '.parquet',
  '.md',
];

/** In UTF-8 bytes: under the file system's 255 (NAME_MAX), with room for a ` (2)` the workspace may add. */
const MAX_NAME_BYTES = 200;

/**
 * A client-sent file name as it will sit in a thread's workspace. A name that
 * tries to leave its folder (`..`, a separator, an absolute path, an encoded
 * form of either) is refused, never silently rewritten: the client learns its
 * name was wrong. Control characters are refused too.
 */
export function checkUploadName(raw: string): string {
  let name = raw;
  // Multipart names may arrive percent-encoded; decode once and judge what it means.
  if (/%[0-9a-f]{2}/i.test(name)) {
    try {
      name = decodeURIComponent(name);
    } catch {
      throw badRequest(`The file name ${JSON.stringify(raw)} is not valid.`, 'Send a plain file name.');
    }
  }
  // The sandbox's own rule (C0, DEL, C1, U+2028/2029): a name it would refuse never reaches a workspace.
  if (name.length === 0 || Buffer.byteLength(name, 'utf8') > MAX_NAME_BYTES || hasControlCharacters(name)) {
    throw badRequest(
      `The file name ${JSON.stringify(raw)} is empty, too long or has control characters.`,
      `Send a name of printable characters, 1 to ${MAX_NAME_BYTES} bytes in UTF-8.`,
    );
  }
  if (name.includes('/') || name.includes('\\') || name === '.' || name === '..' || path.isAbsolute(name)) {
    throw badRequest(
      `The file name ${JSON.stringify(raw)} is a path; only a bare file name is accepted.`,
      'Send the file name without folders.',
    );
  }
  if (name.startsWith('.')) {
    throw badRequest(
      `The file name ${JSON.stringify(raw)} is hidden.`,
      'Send a name that does not start with a dot.',
    );
  }
  const extension = path.extname(name).toLowerCase();
  if (!dataFileExtensions.includes(extension)) {
    throw unsupportedType(
      `Files of type ${JSON.stringify(extension || '(none)')} cannot be analysed.`,
      `Upload one of: ${dataFileExtensions.join(' ')}.`,
    );
  }
  return name;
}

/**
 * Resolves a relative path from a URL inside `root`, or null when it would
 * leave it (`..`, absolute, backslashes, NUL, empty segments). The URL's
 * percent-encoding has already been decoded once by the router; a segment
 * that still holds `%2e`/`%2f` after that is refused as well.
 */
export function resolveInside(root: string, relative: string): string | null {
  if (relative.length === 0 || relative.length > 1024) return null;
  if (relative.includes('\\') || relative.includes('\0') || path.isAbsolute(relative)) return null;
  if (/%2e|%2f|%5c/i.test(relative)) return null;
  const segments = relative.split('/');
  if (segments.some((segment) => segment === '' || segment === '.' || segment === '..')) return null;
  const resolved = path.resolve(root, relative);
  const rootWithSep = path.resolve(root) + path.sep;
  return resolved.startsWith(rootWithSep) ? resolved : null;
}
