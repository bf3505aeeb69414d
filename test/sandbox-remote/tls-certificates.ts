import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';

/**
 * Certificates for a Docker engine reached over TCP with TLS, made with
 * openssl the way Docker's "Protect the daemon socket" guide does: a CA, a
 * server certificate for the engine's IP address, a client certificate.
 * Returns the two folders: the server's (for dockerd's --tls* flags) and the
 * client's, laid out as DOCKER_CERT_PATH expects (ca.pem, cert.pem, key.pem).
 */
export async function makeDockerTlsCertificates(
  root: string,
  serverAddress: string,
): Promise<{ serverDir: string; clientDir: string }> {
  const serverDir = path.join(root, 'server');
  const clientDir = path.join(root, 'client');
  const work = path.join(root, 'work');
  await Promise.all([serverDir, clientDir, work].map((dir) => mkdir(dir, { recursive: true })));
  const openssl = (...args: string[]) => execa('openssl', args, { cwd: work });
  const days = ['-days', '2'];
  await openssl('genrsa', '-out', 'ca-key.pem', '2048');
  await openssl(
    'req',
    '-new',
    '-x509',
    ...days,
    '-key',
    'ca-key.pem',
    '-sha256',
    '-subj',
    '/CN=datalyst-test-ca',
    '-out',
    'ca.pem',
  );

  await openssl('genrsa', '-out', 'server-key.pem', '2048');
  await openssl(
    'req',
    '-new',
    '-key',
    'server-key.pem',
    '-subj',
    `/CN=${serverAddress}`,
    '-out',
    'server.csr',
  );
  await writeFile(
    path.join(work, 'server-ext.cnf'),
    `subjectAltName = IP:${serverAddress}\nextendedKeyUsage = serverAuth\n`,
  );
  await openssl(
    'x509',
    '-req',
    ...days,
    '-sha256',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca-key.pem',
    '-CAcreateserial',
    '-extfile',
    'server-ext.cnf',
    '-out',
    'server-cert.pem',
  );

  await openssl('genrsa', '-out', 'key.pem', '2048');
  await openssl('req', '-new', '-key', 'key.pem', '-subj', '/CN=datalyst-test-client', '-out', 'client.csr');
  await writeFile(path.join(work, 'client-ext.cnf'), 'extendedKeyUsage = clientAuth\n');
  await openssl(
    'x509',
    '-req',
    ...days,
    '-sha256',
    '-in',
    'client.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca-key.pem',
    '-CAcreateserial',
    '-extfile',
    'client-ext.cnf',
    '-out',
    'cert.pem',
  );

  for (const [from, to] of [
    ['ca.pem', path.join(serverDir, 'ca.pem')],
    ['server-cert.pem', path.join(serverDir, 'server-cert.pem')],
    ['server-key.pem', path.join(serverDir, 'server-key.pem')],
    ['ca.pem', path.join(clientDir, 'ca.pem')],
    ['cert.pem', path.join(clientDir, 'cert.pem')],
    ['key.pem', path.join(clientDir, 'key.pem')],
  ] as const) {
    await execa('cp', [path.join(work, from), to]);
  }
  return { serverDir, clientDir };
}
