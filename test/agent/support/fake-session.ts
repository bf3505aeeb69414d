import { CancelledError } from '../../../src/errors/index.ts';
import { defaultSandboxLimits } from '../../../src/sandbox/index.ts';
import type { CellResult } from '../../../src/sandbox/cell-result.ts';
import type {
  CollectedFile,
  OutputChunk,
  SandboxLimits,
  SandboxOptions,
  SandboxSession,
} from '../../../src/sandbox/sandbox.ts';
import type { ProfilePart, WorkspaceProfile } from '../../../src/sandbox/workspace-profile.ts';
import type { SandboxFactory } from '../../../src/agent/analyze-options.ts';
import { cellResult } from '../../support/cell-result.ts';
import { csvReadOptions } from '../../support/read-options.ts';

/**
 * An in-memory SandboxSession for the loop's unit tests: cells are answered by
 * a function, files written by cells live in a map. The real session is tested
 * by the sandbox's own tests and by the docker replay test.
 */

export { cellResult };

export const printed = (text: string): CellResult =>
  cellResult({ stdout: { text, truncated: false, totalBytes: Buffer.byteLength(text) } });

export const failedWith = (name: string, value: string): CellResult =>
  cellResult({
    status: 'error',
    error: {
      name,
      value,
      traceback: `Traceback (most recent call last):\n  File "<cell>", line 1\n${name}: ${value}`,
    },
  });

export const testProfile: WorkspaceProfile = {
  truncated: false,
  files: [
    {
      path: 'sales.csv',
      sizeBytes: 120,
      format: 'csv',
      error: null,
      notes: [],
      tables: [
        {
          name: '',
          rows: 3,
          columnsTruncated: false,
          loadCode: "pd.read_csv('sales.csv')",
          read: csvReadOptions(),
          columns: [
            {
              name: 'region',
              dtype: 'object',
              kind: 'category',
              missing: 0,
              unique: 2,
              samples: ['north', 'south'],
              min: null,
              max: null,
            },
          ],
        },
      ],
    },
  ],
};

export interface FakeSessionOptions {
  /** Answers a cell; may wait. Default: prints nothing. */
  run?: (
    code: string,
    index: number,
    signal: AbortSignal | undefined,
    onOutput: ((chunk: OutputChunk) => void) | undefined,
  ) => CellResult | Promise<CellResult>;
  /** Files readable with readFiles (what cells "wrote"). */
  files?: Map<string, Uint8Array>;
  /** Throws this from execute on the given cell index (0-based). */
  failOnCell?: { index: number; error: Error };
  limits?: Partial<SandboxLimits>;
  /** The image the session says it runs. Default: not said (as test doubles written before `image`). */
  image?: string | null;
  /** close() rejects with this (after marking the session closed). */
  closeError?: Error;
  /** close() waits for this before it marks the session closed (a container that takes its time to go). */
  closing?: Promise<void>;
  /** What profileWorkspace returns (a function: asked at each call, as the workspace may change). Default `testProfile`. */
  profile?: WorkspaceProfile | (() => WorkspaceProfile);
}

export interface FakeSandbox {
  factory: SandboxFactory;
  /** Every session opened, newest last. */
  sessions: FakeSession[];
}

export interface FakeSession extends SandboxSession {
  readonly executed: string[];
  /** Each profileWorkspace call's part (null: the whole workspace). */
  readonly profiled: (ProfilePart | null)[];
  readonly closed: boolean;
  readonly openedWith: SandboxOptions;
}

function waitOrAbort(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new CancelledError(signal.reason));
      return;
    }
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(new CancelledError(signal.reason));
      },
      { once: true },
    );
  });
}

/** A cell that runs for `ms` unless interrupted (the session then throws CancelledError, as the real one does). */
export async function slowCell(
  ms: number,
  signal: AbortSignal | undefined,
  result: CellResult = printed('done\n'),
) {
  await waitOrAbort(ms, signal);
  return result;
}

export function createFakeSandbox(options: FakeSessionOptions = {}): FakeSandbox {
  const sessions: FakeSession[] = [];
  const factory: SandboxFactory = (openedWith) => {
    const executed: string[] = [];
    const profiled: (ProfilePart | null)[] = [];
    let closed = false;
    const session: FakeSession = {
      id: `fake-${sessions.length + 1}`,
      backend: 'docker',
      limits: { ...defaultSandboxLimits, ...options.limits },
      ...(options.image === undefined ? {} : { image: options.image }),
      openedWith,
      executed,
      profiled,
      get closed() {
        return closed;
      },
      async execute(code, executeOptions) {
        if (closed) throw new Error('execute on a closed session');
        const index = executed.length;
        executed.push(code);
        if (options.failOnCell?.index === index) throw options.failOnCell.error;
        if (executeOptions?.signal?.aborted) throw new CancelledError(executeOptions.signal.reason);
        return (
          (await options.run?.(code, index, executeOptions?.signal, executeOptions?.onOutput)) ?? cellResult()
        );
      },
      profileWorkspace(profileOptions) {
        const part = profileOptions?.part;
        profiled.push(part ?? null);
        const profile =
          (typeof options.profile === 'function' ? options.profile() : options.profile) ?? testProfile;
        if (part === undefined || part.count === 1) return Promise.resolve(profile);
        // A part, as the kernel makes it: every count-th file, and the listing it was dealt from.
        return Promise.resolve({
          ...profile,
          files: profile.files.filter((_, index) => index % part.count === part.index),
          part: { ...part, listing: '0'.repeat(64) },
        });
      },
      readFiles(paths) {
        const found: CollectedFile[] = [];
        for (const path of paths) {
          const bytes = options.files?.get(path);
          if (bytes !== undefined) found.push({ path, bytes });
        }
        return Promise.resolve(found);
      },
      async close() {
        await options.closing;
        closed = true;
        if (options.closeError !== undefined) throw options.closeError;
      },
      [Symbol.asyncDispose]() {
        closed = true;
        return Promise.resolve();
      },
    };
    sessions.push(session);
    return Promise.resolve(session);
  };
  return { factory, sessions };
}
