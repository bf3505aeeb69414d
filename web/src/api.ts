import type { Thread, Turn } from '../../src/server/api-schemas.ts';
import type { FileObject } from '../../src/server/openai-schemas.ts';

export type { Thread, Turn, FileObject };

/** An error the server answered with (`{ error: { message, code, fix } }`), shown as text. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly fix: string | null,
  ) {
    super(message);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

async function call<T>(path: string, init: RequestInit, check: (body: unknown) => body is T): Promise<T> {
  const response = await fetch(path, { ...init, credentials: 'same-origin' });
  const body: unknown = await response.json().catch(() => null);
  if (!response.ok) {
    const error = isRecord(body) && isRecord(body.error) ? body.error : {};
    throw new ApiError(
      response.status,
      typeof error.message === 'string' ? error.message : `The server answered ${response.status}.`,
      typeof error.fix === 'string' ? error.fix : null,
    );
  }
  if (!check(body)) throw new ApiError(response.status, `Unexpected answer from ${path}.`, null);
  return body;
}

const isFile = (body: unknown): body is FileObject =>
  isRecord(body) &&
  body.object === 'file' &&
  typeof body.id === 'string' &&
  typeof body.filename === 'string';
const isThread = (body: unknown): body is Thread =>
  isRecord(body) && body.object === 'thread' && typeof body.id === 'string' && Array.isArray(body.turns);
const isTurn = (body: unknown): body is Turn =>
  isRecord(body) && body.object === 'thread.turn' && typeof body.index === 'number';
const isThreadList = (body: unknown): body is { data: Thread[] } =>
  isRecord(body) && Array.isArray(body.data) && body.data.every(isThread);

const json = (body: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

export function uploadFile(file: File): Promise<FileObject> {
  const form = new FormData();
  form.append('purpose', 'assistants');
  form.append('file', file, file.name);
  return call('/v1/files', { method: 'POST', body: form }, isFile);
}

export const listThreads = (): Promise<Thread[]> =>
  call('/v1/threads', {}, isThreadList).then((list) => list.data);
export const getThread = (id: string): Promise<Thread> =>
  call(`/v1/threads/${encodeURIComponent(id)}`, {}, isThread);
export const createThread = (fileIds: string[]): Promise<Thread> =>
  call('/v1/threads', json({ file_ids: fileIds }), isThread);
export const startTurn = (threadId: string, question: string, fileIds: string[]): Promise<Turn> =>
  call(`/v1/threads/${encodeURIComponent(threadId)}/turns`, json({ question, file_ids: fileIds }), isTurn);
export const cancelTurn = (threadId: string, index: number): Promise<Turn> =>
  call(`/v1/threads/${encodeURIComponent(threadId)}/turns/${index}/cancel`, { method: 'POST' }, isTurn);

export const reportPath = (threadId: string, index: number, format: 'html' | 'md' | 'ipynb'): string =>
  `/v1/threads/${encodeURIComponent(threadId)}/turns/${index}/report?format=${format}`;
export const eventsPath = (threadId: string, index: number): string =>
  `/v1/threads/${encodeURIComponent(threadId)}/turns/${index}/events`;
export const chartPath = (threadId: string, index: number, chartId: string): string =>
  `/v1/threads/${encodeURIComponent(threadId)}/turns/${index}/charts/${encodeURIComponent(chartId)}`;
