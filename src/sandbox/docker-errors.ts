import {
  DatalystError,
  ImageMissingError,
  SandboxFailureError,
  SandboxUnavailableError,
} from '../errors/index.ts';

/** The fields docker-modem puts on its errors (HTTP status, engine message, socket error code). */
interface DockerModemErrorFields {
  statusCode?: number;
  json?: { message?: string } | string | null;
  code?: string;
  message?: string;
}

function fieldsOf(error: unknown): DockerModemErrorFields {
  return typeof error === 'object' && error !== null ? (error as DockerModemErrorFields) : {};
}

export function dockerStatusCode(error: unknown): number | undefined {
  const status = fieldsOf(error).statusCode;
  return typeof status === 'number' ? status : undefined;
}

export function dockerErrorMessage(error: unknown): string {
  const fields = fieldsOf(error);
  if (typeof fields.json === 'object' && fields.json !== null && typeof fields.json.message === 'string') {
    return fields.json.message;
  }
  return fields.message ?? String(error);
}

/** Where the client looks for the engine, for messages. */
export function describeDockerHost(env: NodeJS.ProcessEnv = process.env): string {
  return env['DOCKER_HOST'] ? `DOCKER_HOST=${env['DOCKER_HOST']}` : 'the default socket /var/run/docker.sock';
}

export function dockerUnreachableError(cause: unknown, waitedMs?: number): SandboxUnavailableError {
  const where = describeDockerHost();
  const code = fieldsOf(cause).code;
  const why =
    waitedMs !== undefined
      ? `did not answer within ${waitedMs} ms`
      : code === 'EACCES'
        ? 'refused access to its socket'
        : `cannot be reached (${code ?? dockerErrorMessage(cause)})`;
  const fix =
    code === 'EACCES'
      ? 'Add your user to the docker group (then log in again), or run with a DOCKER_HOST you may use.'
      : 'Start the Docker engine (Docker Desktop, or `sudo systemctl start docker` / `dockerd`), or point DOCKER_HOST at a running one; `datalyst doctor` checks the setup. To run without isolation, use the local backend (--sandbox local).';
  return new SandboxUnavailableError(`The Docker engine at ${where} ${why}.`, { fix, cause });
}

/**
 * Socket errors that mean the engine cannot be reached (no socket, refused,
 * no route) or went away mid-request (reset, timed out, broken pipe: a
 * stopped or restarting engine).
 */
const unreachableCodes = new Set([
  'ENOENT',
  'ECONNREFUSED',
  'EACCES',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
]);

/**
 * Maps a failure of a Docker call to Datalyst's errors, in one place:
 * socket errors mean the engine is unreachable, 404 on create means the image
 * is missing, everything else is a failure of the sandbox.
 */
export function mapDockerError(
  error: unknown,
  context: { action: string; image?: string; runtime?: string },
): DatalystError {
  if (DatalystError.isInstance(error)) return error;
  const code = fieldsOf(error).code;
  if (code !== undefined && unreachableCodes.has(code)) return dockerUnreachableError(error);
  const status = dockerStatusCode(error);
  // The engine says "Unknown runtime specified runsc" with a 400 and no code of
  // its own, so its text is the only sign that the runtime is not registered.
  if (status === 400 && context.runtime !== undefined && /unknown runtime/i.test(dockerErrorMessage(error))) {
    return new SandboxUnavailableError(
      `The Docker engine at ${describeDockerHost()} has no runtime named ${context.runtime}.`,
      {
        fix:
          context.runtime === 'runsc'
            ? "Install and register gVisor: `datalyst setup --gvisor` (Debian, as root), or see https://gvisor.dev/docs/user_guide/install/; `datalyst doctor` lists the engine's runtimes. Or use --runtime runc."
            : `Register ${context.runtime} with the engine (daemon.json "runtimes"), or use --runtime runc; \`datalyst doctor\` lists the engine's runtimes.`,
        cause: error,
      },
    );
  }
  // On POST /containers/create, 404 means exactly "no such image" (Engine API).
  if (status === 404 && context.image !== undefined) {
    return new ImageMissingError(context.image, error);
  }
  return new SandboxFailureError(`Docker could not ${context.action}: ${dockerErrorMessage(error)}`, {
    cause: error,
  });
}
