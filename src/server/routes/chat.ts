import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DeepAnalyzeText } from '../deepanalyze-stream.ts';
import { storedFiguresOf } from '../figure-files.ts';
import { badRequest } from '../http-error.ts';
import {
  chatCompletionRequestSchema,
  type ChatCompletion,
  type ChatCompletionChunk,
  type ChatMessageInput,
  type GeneratedFile,
} from '../openai-schemas.ts';
import { baseUrlOf, parseWith, type RouteContext } from '../route-context.ts';
import { SseWriter } from '../sse.ts';
import type { LiveTurn } from '../thread-service.ts';
import type { TurnRecord } from '../thread-store.ts';
import { turnView } from '../views.ts';

/**
 * `POST /v1/chat/completions` as DeepAnalyze serves it: the last user
 * message is the question; `file_ids` (on any message, or top-level) are the
 * data; `thread_id` on the last message continues that thread, otherwise a
 * new thread is made. The reply is the tagged text with each `<Execute>`
 * block, and the generated files (with download URLs) and the `thread_id`
 * come with the message, or in the final chunk when streaming.
 */
export function registerChatRoutes(app: FastifyInstance, context: RouteContext): void {
  app.post('/v1/chat/completions', async (request, reply) => {
    const body = parseWith(chatCompletionRequestSchema, request.body, 'request body');
    const last = body.messages.at(-1) as ChatMessageInput;
    if (last.role !== 'user') {
      throw badRequest(
        "The last message must be the user's question.",
        'End `messages` with a message of role `user`.',
      );
    }
    const question = textOf(last);
    if (question.trim().length === 0)
      throw badRequest('The last message has no text.', 'Put the question in `content`.');
    const fileIds = [...(body.file_ids ?? []), ...body.messages.flatMap((message) => message.file_ids ?? [])];

    const threadId = last.thread_id ?? (await context.threads.create([])).id;
    let turn: LiveTurn;
    try {
      turn = await context.threads.startTurn(threadId, question, fileIds);
    } catch (error) {
      // A refused first question (429, 404 file, 413) leaves no empty thread behind.
      if (last.thread_id === undefined) await context.threads.delete(threadId);
      throw error;
    }
    const completionId = `chatcmpl-${randomBytes(12).toString('hex')}`;
    const created = Math.floor(Date.now() / 1000);
    // A client that goes away cancels its turn: the model request and the running cell stop, and the sandbox goes back.
    const cancelOnLeave = (): void => {
      if (!turn.log.ended) context.threads.cancel(threadId, turn.record.index, { releaseSandbox: true });
    };
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) cancelOnLeave();
    });

    if (body.stream === true) {
      await streamCompletion(request, reply, context, turn, { completionId, created });
      return;
    }
    const text = new DeepAnalyzeText();
    const figures: string[] = [];
    let content = '';
    for await (const event of context.threads.events(
      threadId,
      turn.record.index,
      0,
      turn.controller.signal,
    )) {
      content += text.next(event);
      for (const figure of storedFiguresOf(event)) figures.push(figure.fileName);
    }
    const record = await turn.done;
    content += noAnswerNote(record, content !== '');
    const files = generatedFiles(baseUrlOf(request, context), threadId, record, figures);
    const completion: ChatCompletion = {
      id: completionId,
      object: 'chat.completion',
      created,
      model: context.modelId,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content, files, thread_id: threadId },
          finish_reason: record.termination?.reason === 'max-rounds' ? 'length' : 'stop',
        },
      ],
      generated_files: files,
      termination: record.termination ?? { reason: record.status, detail: '' },
      ...(fileIds.length > 0 ? { attached_files: fileIds } : {}),
    };
    return reply.send(completion);
  });
}

async function streamCompletion(
  request: FastifyRequest,
  reply: FastifyReply,
  context: RouteContext,
  turn: LiveTurn,
  ids: { completionId: string; created: number },
): Promise<void> {
  reply.hijack();
  const sse = new SseWriter(reply.raw);
  const chunk = (
    delta: ChatCompletionChunk['choices'][number]['delta'],
    finish: 'stop' | 'length' | null = null,
  ) =>
    ({
      id: ids.completionId,
      object: 'chat.completion.chunk',
      created: ids.created,
      model: context.modelId,
      choices: [{ index: 0, delta, finish_reason: finish }],
    }) satisfies ChatCompletionChunk;
  const text = new DeepAnalyzeText();
  const figures: string[] = [];
  let sent = false;
  try {
    sse.send(chunk({ role: 'assistant', content: '' }));
    for await (const event of context.threads.events(
      turn.threadId,
      turn.record.index,
      0,
      turn.controller.signal,
    )) {
      if (sse.closed) break;
      for (const figure of storedFiguresOf(event)) figures.push(figure.fileName);
      const content = text.next(event);
      if (content.length > 0) {
        sse.send(chunk({ content }));
        sent = true;
      }
    }
    if (sse.closed) return;
    const record = await turn.done;
    const note = noAnswerNote(record, sent);
    if (note !== '') sse.send(chunk({ content: note }));
    const files = generatedFiles(baseUrlOf(request, context), turn.threadId, record, figures);
    sse.send({
      ...chunk(
        { files, thread_id: turn.threadId },
        record.termination?.reason === 'max-rounds' ? 'length' : 'stop',
      ),
      generated_files: files,
      termination: record.termination ?? { reason: record.status, detail: '' },
    } satisfies ChatCompletionChunk);
    sse.send('[DONE]');
  } finally {
    sse.end();
  }
}

/**
 * The message's last words when the turn ended without an answer (no data, a
 * failure, a limit): the `openai` client shows `content` and not the extra
 * `termination` field, and an empty reply that says `stop` reads as success.
 */
function noAnswerNote(record: TurnRecord, afterText: boolean): string {
  const termination = record.termination;
  if (record.answer !== null || termination === null || termination.reason === 'asked') return '';
  return `${afterText ? '\n\n' : ''}No answer (${termination.reason}): ${termination.detail}`;
}

/**
 * DeepAnalyze's `files` ({ name, url }): the turn's artifacts (files its cells wrote), the figures its cells
 * displayed (`figures`: their file names, figure-files.ts), as DeepAnalyze lists the images an analysis made,
 * and its report, `report-turn-<n>.html` (DeepAnalyze's report names differ per turn too: a timestamp).
 */
function generatedFiles(
  baseUrl: string,
  threadId: string,
  record: TurnRecord,
  figures: readonly string[],
): GeneratedFile[] {
  const view = turnView(baseUrl, threadId, record);
  const turnUrl = `${baseUrl}/v1/threads/${threadId}/turns/${record.index}`;
  return [
    ...view.artifacts.map((artifact) => ({ name: artifact.path, url: artifact.url })),
    ...figures.map((name) => ({ name, url: `${turnUrl}/figures/${name}` })),
    // Named per turn: a client that saves files by name keeps each turn's report (the download itself is report.html).
    { name: `report-turn-${record.index}.html`, url: `${turnUrl}/report?format=html` },
  ];
}

function textOf(message: ChatMessageInput): string {
  const content = message.content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content.map((part) => (part.type === 'text' ? (part.text ?? '') : '')).join('\n');
  return '';
}
