import type { FastifyRequest } from 'fastify';
import { ServerRequestError } from './http-error.ts';

/**
 * A server without an API key trusts whoever can reach its loopback port —
 * and a web page in the user's browser can: a cross-site form or `fetch`
 * POST with `multipart/form-data` (or no body) is a "simple request" sent
 * without a preflight, and DNS rebinding makes an attacker's name resolve to
 * 127.0.0.1 so the page may even read the answers (the user's files,
 * reports). Browsers always send the name they asked for in `Host`, and the
 * page's origin in `Origin` on every cross-site POST, so the keyless server
 * refuses a `Host` that is not a loopback name and an `Origin` that is not a
 * loopback page (the web UI served here, or a dev server on this machine).
 * Programs (curl, the `openai` client) send `Host: 127.0.0.1:<port>` and no
 * `Origin`, and pass.
 */
export function checkBrowserRequest(request: FastifyRequest): void {
  const host = request.headers.host;
  if (host !== undefined && !isLoopbackName(hostnameOf(host))) {
    throw new ServerRequestError(
      403,
      'FORBIDDEN_HOST',
      `This server answers only requests to a loopback address, not to ${JSON.stringify(host)}.`,
      {
        fix: 'Call it as http://127.0.0.1:<port> (or localhost); to serve other names, start it with an API key.',
      },
    );
  }
  const origin = request.headers.origin;
  if (origin !== undefined && !isLoopbackOrigin(origin)) {
    throw new ServerRequestError(
      403,
      'FORBIDDEN_ORIGIN',
      `Requests from the web page ${JSON.stringify(origin)} are refused.`,
      {
        fix: 'Only pages served from this machine (127.0.0.1, localhost) may call a server without an API key.',
      },
    );
  }
}

/** `127.0.0.1:8200` → `127.0.0.1`, `[::1]:8200` → `::1`; lower case. */
function hostnameOf(host: string): string {
  const bracketed = /^\[([^\]]*)\](?::\d*)?$/.exec(host);
  if (bracketed !== null) return (bracketed[1] ?? '').toLowerCase();
  return host.replace(/:\d*$/, '').toLowerCase();
}

function isLoopbackName(hostname: string): boolean {
  return (
    hostname === 'localhost' ||
    hostname === '::1' ||
    /^127\.(?:25[0-5]|2[0-4]\d|1?\d?\d)\.(?:25[0-5]|2[0-4]\d|1?\d?\d)\.(?:25[0-5]|2[0-4]\d|1?\d?\d)$/.test(
      hostname,
    )
  );
}

/** `http://localhost:5173`, `https://127.0.0.1` …; `null` (a sandboxed or privacy-stripped page) is not. */
function isLoopbackOrigin(origin: string): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  return isLoopbackName(hostnameOf(url.host));
}
