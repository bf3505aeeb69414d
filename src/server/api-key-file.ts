import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { DatalystError } from '../errors/index.ts';

/** The API key file is unsafe (readable by others, not a file) or empty: the server does not start. */
export class ApiKeyFileError extends DatalystError {
  constructor(
    code: 'API_KEY_FILE_UNSAFE' | 'API_KEY_FILE_INVALID',
    message: string,
    fix: string,
    cause?: unknown,
  ) {
    super(code, message, { fault: 'user', fix, cause });
  }
}

/** Bytes read at most: a key is a line, not a document. */
const maxKeyFileBytes = 4096;

/**
 * Reads the server's API key from a file, refusing (as ssh does with a
 * private key) a file that its group or other users may read or write: on a
 * shared machine anyone could then take the key, and one owned by another
 * user (who could change it). The mode is checked on the
 * opened descriptor, so the file that is read is the file that was checked;
 * a symbolic link is followed only to a regular file.
 */
export async function readApiKeyFile(file: string): Promise<string> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK).catch((error: unknown) => {
    throw new ApiKeyFileError(
      'API_KEY_FILE_INVALID',
      `The API key file ${file} cannot be opened.`,
      'Check the path given to --api-key-file.',
      error,
    );
  });
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) {
      throw new ApiKeyFileError(
        'API_KEY_FILE_INVALID',
        `The API key file ${file} is not a regular file.`,
        'Put the key in a regular file with `umask 077; openssl rand -hex 32 > key`.',
      );
    }
    // Windows has no mode bits to check (its ACLs are not modelled by Node's stat).
    if (process.platform !== 'win32' && (stats.mode & 0o077) !== 0) {
      const mode = (stats.mode & 0o777).toString(8).padStart(4, '0');
      throw new ApiKeyFileError(
        'API_KEY_FILE_UNSAFE',
        `The API key file ${file} has permissions ${mode}: other users of this machine can read or change the key, so the server does not start.`,
        `Make it private to its owner: \`chmod 600 ${file}\`.`,
      );
    }
    // Owned by another user (not root), it is theirs to change whatever its mode: ssh refuses such a key too.
    const uid = process.getuid?.();
    if (uid !== undefined && stats.uid !== uid && stats.uid !== 0) {
      throw new ApiKeyFileError(
        'API_KEY_FILE_UNSAFE',
        `The API key file ${file} is owned by user ${stats.uid}, not by the user the server runs as (${uid}): that user can change the key, so the server does not start.`,
        `Use a key file of your own: \`umask 077; openssl rand -hex 32 > key\`, or \`chown ${uid} ${file}\`.`,
      );
    }
    const buffer = Buffer.alloc(maxKeyFileBytes + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    if (bytesRead > maxKeyFileBytes) {
      throw new ApiKeyFileError(
        'API_KEY_FILE_INVALID',
        `The API key file ${file} is larger than ${maxKeyFileBytes} bytes.`,
        'Put only the key in the file.',
      );
    }
    const key = buffer.subarray(0, bytesRead).toString('utf8').trim();
    if (key.length === 0) {
      throw new ApiKeyFileError(
        'API_KEY_FILE_INVALID',
        `The API key file ${file} is empty.`,
        'Put the API key in the file.',
      );
    }
    return key;
  } finally {
    await handle.close();
  }
}
