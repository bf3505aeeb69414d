import type { WorkspaceProfile } from '../sandbox/workspace-profile.ts';
import type { StopDecision } from './stop-conditions.ts';
import { clipText } from './clip-text.ts';

const maxFilesNamed = 10;
const maxReasonChars = 200;

/**
 * The `no-data` termination: the workspace holds no file with anything to
 * read, so the run ends before the first model turn, not with an "answer"
 * about nothing. A file counts as readable when the profile found a table
 * with at least one column (a header-only CSV is 0 rows × its columns: data).
 * A README or other text beside no table is not data. Decided only from a profile the
 * sandbox computed (`profiled`): a profile that failed as a whole says
 * nothing about the files, and the run goes on. With `whenNoFiles:
 * 'ask-model'` a workspace with no file at all goes to the model (a chat
 * without data); files that cannot be read still end the run.
 */
export function noDataDecision(
  profile: WorkspaceProfile,
  profiled: boolean,
  whenNoFiles: 'stop' | 'ask-model' = 'stop',
): StopDecision | null {
  if (!profiled) return null;
  const readable = profile.files.some((file) => file.tables.some((table) => table.columns.length > 0));
  if (readable) return null;
  if (profile.files.length === 0) {
    if (whenNoFiles === 'ask-model' && (profile.totalFiles ?? 0) === 0) return null;
    return { reason: 'no-data', detail: 'The workspace holds no files, so there was nothing to analyse.' };
  }
  const reasons = profile.files.slice(0, maxFilesNamed).map((file) => {
    const why =
      file.error ??
      (file.format === 'unsupported'
        ? 'no reader for this kind of file'
        : file.format === 'text'
          ? 'text, not a table'
          : 'no table with any column was found in it');
    // The kernel's reasons may end with a period; the sentence here ends once.
    return `${clipText(file.path, maxReasonChars)}: ${clipText(why, maxReasonChars).replace(/\.+$/, '')}`;
  });
  const more = profile.files.length - reasons.length;
  return {
    reason: 'no-data',
    detail:
      `No file of the workspace could be read, so nothing was analysed. ${reasons.join('; ')}` +
      (more > 0 ? `; and ${more} more file${more === 1 ? '' : 's'}.` : '.'),
  };
}
