import { createReadStream } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { badRequest, notFound, unsupportedType } from '../http-error.ts';
import { fileUploadFieldsSchema, type FileList, type FileObject } from '../openai-schemas.ts';
import { parseWith, type RouteContext } from '../route-context.ts';
import { checkUploadName } from '../safe-name.ts';

const idParams = z.object({ id: z.string().max(64) });

/** `/v1/files`: OpenAI's files API as DeepAnalyze serves it (the `openai` client's `files.*` work). */
export function registerFileRoutes(app: FastifyInstance, context: RouteContext): void {
  app.post('/v1/files', async (request, reply) => {
    if (!request.isMultipart()) {
      throw unsupportedType(
        'An upload must be multipart/form-data.',
        'Send the file as the form field `file`.',
      );
    }
    let file: FileObject | null = null;
    const fields: Record<string, string> = {};
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        if (part.fieldname !== 'file' || file !== null) {
          part.file.resume();
          throw badRequest('Send exactly one file, in the form field `file`.', 'Name the field `file`.');
        }
        const filename = checkUploadName(part.filename);
        file = await context.files.put(part.file, filename, 'assistants', () => part.file.truncated);
      } else if (typeof part.value === 'string') {
        fields[part.fieldname] = part.value;
      }
    }
    if (file === null)
      throw badRequest('The form has no field `file`.', 'Send the file as the form field `file`.');
    const { purpose } = parseWith(fileUploadFieldsSchema, fields, 'upload form');
    if (purpose !== file.purpose) file = await context.files.setPurpose(file, purpose);
    return reply.code(200).send(file);
  });

  app.get('/v1/files', async (): Promise<FileList> => ({ object: 'list', data: await context.files.list() }));

  app.get('/v1/files/:id', async (request) => {
    const { id } = parseWith(idParams, request.params, 'path');
    const file = await context.files.get(id);
    if (file === null) throw notFound('file', id);
    return file;
  });

  app.get('/v1/files/:id/content', async (request, reply) => {
    const { id } = parseWith(idParams, request.params, 'path');
    const file = await context.files.get(id);
    if (file === null) throw notFound('file', id);
    return reply
      .header('content-type', 'application/octet-stream')
      .header('content-disposition', contentDisposition(file.filename))
      .header('x-content-type-options', 'nosniff')
      .send(createReadStream(context.files.blobPath(file.sha256)));
  });

  app.delete('/v1/files/:id', async (request) => {
    const { id } = parseWith(idParams, request.params, 'path');
    if (!(await context.files.delete(id))) throw notFound('file', id);
    return { id, object: 'file' as const, deleted: true as const };
  });
}

/** An attachment header whose name cannot break out of the header (RFC 6266 with RFC 5987 encoding). */
export function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}
