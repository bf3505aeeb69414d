import type { AnswerGrounding, Thread, ThreadProfile, Turn } from '../../src/server/api-schemas.ts';
import type { FileObject } from '../../src/server/openai-schemas.ts';

export type { AnswerGrounding, Thread, ThreadProfile, Turn, FileObject };

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

/**
 * The server's API key, for a server bound off loopback: kept for this tab
 * only (sessionStorage, gone when the tab closes), sent as a bearer token.
 */
const KEY_ITEM = 'datalyst.apiKey';

export function apiKey(): string | null {
  try {
    const key = sessionStorage.getItem(KEY_ITEM);
    return key === null || key === '' ? null : key;
  } catch {
    return null;
  }
}

export function setApiKey(key: string | null): void {
  try {
    if (key === null || key.trim() === '') sessionStorage.removeItem(KEY_ITEM);
    else sessionStorage.setItem(KEY_ITEM, key.trim());
  } catch {
    // Storage refused (private mode): the key lasts until the page reloads.
  }
}

let unauthorized: () => void = () => undefined;

/** What to do when the server answers 401 (the page asks for the key). */
export function onUnauthorized(handler: () => void): void {
  unauthorized = handler;
}

function headers(extra: Record<string, string> = {}): Headers {
  const result = new Headers(extra);
  const key = apiKey();
  if (key !== null) result.set('authorization', `Bearer ${key}`);
  return result;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

async function errorFrom(response: Response): Promise<ApiError> {
  const body: unknown = await response.json().catch(() => null);
  const error = isRecord(body) && isRecord(body.error) ? body.error : {};
  if (response.status === 401) unauthorized();
  return new ApiError(
    response.status,
    typeof error.message === 'string' ? error.message : `The server answered ${response.status}.`,
    typeof error.fix === 'string' ? error.fix : null,
  );
}

async function call<T>(
  path: string,
  init: RequestInit & { json?: unknown },
  check: (body: unknown) => body is T,
): Promise<T> {
  const { json, ...rest } = init;
  const response = await fetch(path, {
    ...rest,
    ...(json === undefined ? {} : { method: 'POST', body: JSON.stringify(json) }),
    headers: headers(json === undefined ? {} : { 'content-type': 'application/json' }),
    credentials: 'same-origin',
  });
  if (!response.ok) throw await errorFrom(response);
  const body: unknown = await response.json().catch(() => null);
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
const isDeleted = (body: unknown): body is { deleted: true } => isRecord(body) && body.deleted === true;
/** Only the envelope is checked: the profile's content is read field by field (new fields may come). */
const isProfile = (body: unknown): body is ThreadProfile =>
  isRecord(body) && body.object === 'thread.profile' && isRecord(body.profile);

export function uploadFile(file: File): Promise<FileObject> {
  const form = new FormData();
  form.append('purpose', 'assistants');
  form.append('file', file, file.name);
  return call('/v1/files', { method: 'POST', body: form }, isFile);
}

const threadPath = (id: string): string => `/v1/threads/${encodeURIComponent(id)}`;

export const listThreads = (): Promise<Thread[]> =>
  call('/v1/threads', {}, isThreadList).then((list) => list.data);
export const getThread = (id: string): Promise<Thread> => call(threadPath(id), {}, isThread);
export const createThread = (fileIds: string[]): Promise<Thread> =>
  call('/v1/threads', { json: { file_ids: fileIds } }, isThread);
export const deleteThread = (id: string): Promise<unknown> =>
  call(threadPath(id), { method: 'DELETE' }, isDeleted);
export const getProfile = (id: string): Promise<ThreadProfile> =>
  call(`${threadPath(id)}/profile`, {}, isProfile);
export const startTurn = (threadId: string, question: string, fileIds: string[]): Promise<Turn> =>
  call(`${threadPath(threadId)}/turns`, { json: { question, file_ids: fileIds } }, isTurn);
export const cancelTurn = (threadId: string, index: number): Promise<Turn> =>
  call(`${threadPath(threadId)}/turns/${index}/cancel`, { method: 'POST' }, isTurn);

export type ReportDownloadFormat = 'html' | 'md' | 'ipynb';
export const reportPath = (threadId: string, index: number, format: ReportDownloadFormat): string =>
  `${threadPath(threadId)}/turns/${index}/report?format=${format}`;
/**
 * The names the server's Content-Disposition gives the reports (src/server/report-cache.ts `fileOf`,
 * not imported: the page takes only types from src/). A link's `download` must say the same, or the
 * browser saves under the header's name while the key path (downloadWithKey) saves under the link's.
 */
export const reportFileName: Record<ReportDownloadFormat, string> = {
  html: 'report.html',
  md: 'report.md',
  ipynb: 'analysis.ipynb',
};
export const eventsPath = (threadId: string, index: number): string =>
  `${threadPath(threadId)}/turns/${index}/events`;
export const chartPath = (threadId: string, index: number, chartId: string): string =>
  `${threadPath(threadId)}/turns/${index}/charts/${encodeURIComponent(chartId)}`;

export const figurePath = (threadId: string, index: number, name: string): string =>
  `${threadPath(threadId)}/turns/${index}/figures/${encodeURIComponent(name)}`;

/**
 * Shows a server image (a chart, a figure) in `image`: a plain `src` without a key;
 * with one, fetched with it and shown from a `blob:` URL (an `<img>` cannot
 * send a header). A failure fires the image's `error` event either way.
 */
export function showServerImage(image: HTMLImageElement, path: string): void {
  if (apiKey() === null) {
    image.src = path;
    return;
  }
  fetch(path, { headers: headers() })
    .then(async (response) => {
      if (!response.ok) throw await errorFrom(response);
      const url = URL.createObjectURL(await response.blob());
      image.addEventListener('load', () => URL.revokeObjectURL(url), { once: true });
      image.src = url;
    })
    .catch(() => image.dispatchEvent(new Event('error')));
}

/**
 * Why a server image (a chart) did not load, in the server's words: an image's
 * `error` event carries none, so the path is asked again for its JSON error.
 * Null when the server gives no reason (it answered, or could not be reached).
 */
export async function imageProblem(path: string): Promise<string | null> {
  try {
    const response = await fetch(path, { headers: headers(), credentials: 'same-origin' });
    return response.ok ? null : (await errorFrom(response)).message;
  } catch {
    return null;
  }
}

/**
 * Why, with an API key, "Open the report" downloads it instead of opening it:
 * a new tab cannot send the key, and a tab opened from the fetched HTML (a
 * `blob:` URL) takes this page's origin and policy in Chromium: the policy
 * refuses the report's inline styles (it opens unstyled), and the origin is
 * this page's instead of the server's sandbox for reports.
 */
export const reportWithKeyNote =
  'With an API key the report is downloaded, not opened: a new tab cannot send the key, and a report opened from this page (a blob: URL) would take this page’s policy, which blocks the report’s styles, and its origin, instead of the report’s own sandbox. Open the downloaded file.';

/** Downloads a server file with the key (a link cannot send it): fetched, then saved from a `blob:` URL. */
export async function downloadWithKey(path: string, filename: string): Promise<void> {
  const response = await fetch(path, { headers: headers() });
  if (!response.ok) throw await errorFrom(response);
  const url = URL.createObjectURL(await response.blob());
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
