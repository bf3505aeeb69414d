import net from 'node:net';
import { DatalystError } from '../errors/index.ts';

/** The server cannot listen where it was asked to: the person picks another port or address. */
export class ListenError extends DatalystError {
  constructor(
    code: 'PORT_IN_USE' | 'ADDRESS_UNAVAILABLE' | 'PORT_PRIVILEGED',
    message: string,
    fix: string,
    cause: unknown,
  ) {
    super(code, message, { fault: 'user', fix, cause });
  }
}

/**
 * A failed listen on `host:port` as a ListenError that says why and what to
 * do (a port in use, an address not on this machine, a privileged port);
 * any other error is returned as it is.
 */
export function listenErrorOf(error: unknown, host: string, port: number): unknown {
  const code = typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
  switch (code) {
    case 'EADDRINUSE':
      return new ListenError(
        'PORT_IN_USE',
        `Port ${port} on ${host} is in use: another program (another datalyst serve?) listens on it.`,
        'Stop the other server, or choose another port with --port <n> (the `port` option); --port 0 picks a free one.',
        error,
      );
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
      return new ListenError(
        'ADDRESS_UNAVAILABLE',
        `Cannot listen on ${host}: ${code === 'ENOTFOUND' ? 'the name does not resolve' : 'it is not an address of this machine'}.`,
        'Pass --host (the `host` option) with an address of this machine: 127.0.0.1 for this machine only (the default), 0.0.0.0 for every interface (with an API key).',
        error,
      );
    case 'EACCES':
      return new ListenError(
        'PORT_PRIVILEGED',
        `Not permitted to listen on port ${port} of ${host}${port < 1024 ? ': ports below 1024 need root or CAP_NET_BIND_SERVICE' : ''}.`,
        'Choose a port from 1024 up with --port <n> (the default is 8200), or put a reverse proxy on the privileged port.',
        error,
      );
    default:
      return error;
  }
}

/**
 * Binds `host:port` and lets go at once, so that a port in use is found
 * before anything is started or changed; throws the ListenError. Port 0
 * (any free port) is not checked.
 */
export async function checkListenAddress(host: string, port: number): Promise<void> {
  if (port === 0) return;
  const probe = net.createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.listen({ host, port, exclusive: true }, resolve);
    });
  } catch (error) {
    throw listenErrorOf(error, host, port);
  }
  await new Promise((resolve) => probe.close(resolve));
}
