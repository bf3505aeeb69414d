/** Whether a thrown value is a Node system error with this `code` (`EEXIST`, `ENOENT`, …). */
export function hasErrorCode(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === code;
}

/** The file or folder is not there (ENOENT). */
export const isMissingFile = (error: unknown): boolean => hasErrorCode(error, 'ENOENT');
