import { createHash, timingSafeEqual } from 'node:crypto';
import { ConfigError } from '../errors/index.ts';

/** The addresses a server may listen on without an API key: this machine's own loopback names. */
const keylessHosts = new Set(['127.0.0.1', '::1', 'localhost']);

export function needsApiKey(host: string): boolean {
  return !keylessHosts.has(host);
}

/** Refuses to start on a non-default address without a key (loopback aliases such as 127.0.0.2 included). */
export function checkListenSecurity(host: string, apiKey: string | null): void {
  if (needsApiKey(host) && apiKey === null) {
    throw new ConfigError(
      `Listening on ${host} needs an API key, and none is set.`,
      'Set DATALYST_SERVER_API_KEY (or --api-key-file) to a long random secret, or listen on 127.0.0.1.',
    );
  }
  if (apiKey !== null && apiKey.length < 16) {
    throw new ConfigError(
      'The server API key is shorter than 16 characters.',
      'Use a long random secret, e.g. `openssl rand -hex 32`.',
    );
  }
}

/**
 * Refuses a public URL (`--public-url`, already parsed) off this machine without a key: it says clients come
 * from elsewhere through a proxy, and a proxy that sends the upstream's own `Host` (nginx's default) and no
 * `Origin` passes the keyless server's browser guard, which would serve them all.
 */
export function checkPublicUrlSecurity(publicUrl: string, apiKey: string | null): void {
  const hostname = new URL(publicUrl).hostname.replace(/^\[(.*)\]$/, '$1');
  if (needsApiKey(hostname) && apiKey === null) {
    throw new ConfigError(
      `--public-url ${publicUrl} is reached from other machines, which needs an API key, and none is set.`,
      'Set DATALYST_SERVER_API_KEY (or --api-key-file) to a long random secret (the proxy passes the Authorization header on), or leave --public-url out to serve only this machine.',
    );
  }
}

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/**
 * A check of `Authorization: Bearer <key>` in constant time: both sides are
 * hashed first, so neither the length nor a common prefix leaks through timing.
 */
export function createKeyCheck(apiKey: string): (authorization: string | undefined) => boolean {
  const expected = digest(apiKey);
  return (authorization) => {
    const match = /^Bearer (.+)$/i.exec(authorization ?? '');
    const given = digest(match?.[1] ?? '');
    return timingSafeEqual(expected, given) && match !== null;
  };
}
