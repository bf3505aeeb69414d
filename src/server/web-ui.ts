import { existsSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';

/** Where `scripts/setup.sh` (Vite) puts the built web UI (issue #14). */
export const webDistDir = path.resolve(import.meta.dirname, '../../web/dist');

/**
 * The web UI's policy: its own scripts, styles and API only; images are the
 * UI's files or the figures' `data:` PNGs; nothing inline, nothing remote,
 * no frames, forms or base changes.
 */
export const webContentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  // blob: for the charts and figures fetched with the API key (an <img> cannot send it).
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The UI's own files (the page and its hashed assets): served without the
 * API key, which the page asks for and sends on every API call. They hold
 * no data.
 */
export function isWebUiPath(url: string): boolean {
  const pathname = url.split('?')[0] ?? '';
  return pathname === '/' || pathname === '/index.html' || /^\/assets\/[\w.-]+$/.test(pathname);
}

/**
 * Whether a request announces a body (a `content-length` above 0, or any
 * `transfer-encoding`). The requests served without the API key (the UI's
 * files, /health) must carry none: a peer without the key neither sends
 * bytes the server reads nor holds a connection by trickling them.
 */
export function announcesBody(headers: Record<string, string | string[] | undefined>): boolean {
  if (headers['transfer-encoding'] !== undefined) return true;
  const length = headers['content-length'];
  if (length === undefined) return false;
  return !/^\s*0+\s*$/.test(Array.isArray(length) ? length.join(',') : length);
}

/** Serves the built UI at `/` (index.html, /assets/*) with that policy; nothing when it was not built. */
export async function registerWebUi(app: FastifyInstance, root: string = webDistDir): Promise<boolean> {
  if (!existsSync(path.join(root, 'index.html'))) return false;
  await app.register(fastifyStatic, {
    root,
    prefix: '/',
    index: ['index.html'],
    dotfiles: 'deny',
    setHeaders(response) {
      response.setHeader('content-security-policy', webContentSecurityPolicy);
      response.setHeader('x-content-type-options', 'nosniff');
      response.setHeader('referrer-policy', 'no-referrer');
    },
  });
  return true;
}
