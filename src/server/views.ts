import type { Thread, Turn } from './api-schemas.ts';
import type { FileObject } from './openai-schemas.ts';
import type { ThreadRecord, TurnRecord } from './thread-store.ts';

/** How the API shows stored records: adds the URLs, with the base the client used to reach us. */
export function turnView(baseUrl: string, threadId: string, turn: TurnRecord): Turn {
  const turnUrl = `${baseUrl}/v1/threads/${threadId}/turns/${turn.index}`;
  return {
    object: 'thread.turn',
    thread_id: threadId,
    index: turn.index,
    question: turn.question,
    status: turn.status,
    created_at: turn.created_at,
    started_at: turn.started_at,
    ended_at: turn.ended_at,
    termination: turn.termination,
    answer: turn.answer,
    rounds: turn.rounds,
    artifacts: turn.artifacts.map((artifact) => ({
      path: artifact.path,
      bytes: artifact.bytes,
      url: `${turnUrl}/artifacts/${artifact.path.split('/').map(encodeURIComponent).join('/')}`,
    })),
    events_url: `${turnUrl}/events`,
  };
}

export function threadView(
  baseUrl: string,
  record: ThreadRecord,
  turns: readonly TurnRecord[],
  files: readonly FileObject[],
  sandboxOpen: boolean,
): Thread {
  return {
    id: record.id,
    object: 'thread',
    created_at: record.created_at,
    model: record.model,
    files: files.map((file) => ({ ...file, filename: record.workspace_names[file.id] ?? file.filename })),
    turns: turns.map((turn) => turnView(baseUrl, record.id, turn)),
    sandbox_open: sandboxOpen,
  };
}
