import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Docker from 'dockerode';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  containerCreateBody,
  containerLabels,
  defaultSandboxLimits,
  runnerImageTag,
} from '../../src/sandbox/index.ts';
import { traceRecordSchema, type TraceRecord } from '../../src/trace/schema.ts';
import { SecondDockerEngine } from '../support/second-docker-engine.ts';
import { makeDockerTlsCertificates } from './tls-certificates.ts';

/**
 * A remote engine, as DOCKER_HOST sees one: a second dockerd of this test's
 * own, in a network namespace of its own, listening only on TCP with TLS
 * (certificates made here with openssl) on an address of a veth pair the test
 * made. The real `datalyst analyze --offline` runs against it through
 * DOCKER_HOST, DOCKER_TLS_VERIFY and DOCKER_CERT_PATH alone: the inputs must
 * arrive without any bind mount (the engine shares no folder with the
 * client), the analysis must answer, the reaper must clear an orphan there,
 * SIGTERM must remove the session's container there, and nothing may be left.
 */

const projectRoot = path.resolve(import.meta.dirname, '../..');
const bin = path.join(projectRoot, 'bin', 'datalyst.js');
const port = 2376;
const certRoot = `/tmp/datalyst-remote-${process.pid}-certs`;

let clientDir = '';
const remote = new SecondDockerEngine(
  { name: 'remote', interfacePrefix: 'dlr', subnetOctet: 214, tls: { certDir: `${certRoot}/server`, port } },
  (engine) =>
    new Docker({
      host: engine.engineAddress,
      port,
      protocol: 'https',
      ca: readFileSync(path.join(clientDir, 'ca.pem')),
      cert: readFileSync(path.join(clientDir, 'cert.pem')),
      key: readFileSync(path.join(clientDir, 'key.pem')),
    }),
);
let engine: Docker;
let image: string;
let workspace: string;
let scratch: string;

/** The environment a person sets for a remote engine, and nothing else of the host's Docker. */
function remoteEnv(): Record<string, string> {
  return {
    NO_COLOR: '1',
    DATALYST_MODEL: '',
    OPENAI_API_KEY: '',
    OPENAI_BASE_URL: '',
    DATALYST_BASE_URL: '',
    DATALYST_API_KEY: '',
    DATALYST_RUNTIME: '',
    DOCKER_HOST: `tcp://${remote.engineAddress}:${port}`,
    DOCKER_TLS_VERIFY: '1',
    DOCKER_CERT_PATH: clientDir,
  };
}

function datalyst(args: readonly string[]) {
  return execa(process.execPath, [bin, ...args], {
    cwd: projectRoot,
    env: remoteEnv(),
    reject: false,
    all: true,
  });
}

async function sessionContainers(filter: string): Promise<Docker.ContainerInfo[]> {
  return engine.listContainers({ all: true, filters: { label: [filter] } });
}

async function readTrace(file: string): Promise<TraceRecord[]> {
  return (await readFile(file, 'utf8'))
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => traceRecordSchema.parse(JSON.parse(line)));
}

beforeAll(async () => {
  image = process.env['DATALYST_IMAGE'] ?? (await runnerImageTag());
  const { clientDir: made } = await makeDockerTlsCertificates(certRoot, remote.engineAddress);
  clientDir = made;
  await remote.start();
  engine = remote.client();
  await remote.loadImage(image, clientDir);
  scratch = await mkdtemp(path.join(tmpdir(), 'datalyst-remote-'));
  workspace = path.join(scratch, 'workspace');
  await mkdir(workspace);
  await writeFile(
    path.join(workspace, 'sales.csv'),
    'region,revenue\nnorth,10\nsouth,20\neast,30\nwest,45\n',
  );
}, 600_000);

afterAll(async () => {
  await remote.dispose();
  await rm(certRoot, { recursive: true, force: true });
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe('a remote Docker engine over TCP with TLS', () => {
  it('refuses a client without the certificates', async () => {
    const anonymous = new Docker({
      host: remote.engineAddress,
      port,
      protocol: 'https',
      ca: readFileSync(path.join(clientDir, 'ca.pem')),
    });
    await expect(anonymous.ping()).rejects.toThrow();
  });

  it('doctor finds it through DOCKER_HOST, DOCKER_TLS_VERIFY and DOCKER_CERT_PATH', async () => {
    const run = await datalyst(['doctor']);
    expect(run.exitCode, run.all).toBe(0);
    expect(run.stdout).toContain(`at tcp://${remote.engineAddress}:${port}`);
    expect(run.stdout).toMatch(/^[✓–] Runtimes +.*\brunc \(default\)/m);
    expect(run.stdout).toMatch(/^✓ Runner image +datalyst\/python-runner:[0-9a-f]{16}/m);
  });

  it('runs a full offline analysis there: inputs arrive without a bind mount, the reaper clears an orphan, nothing is left', async () => {
    // An orphan of a process that is gone, as a crashed run leaves one: the
    // reaper of the next run on that engine must remove it.
    const gone = execa('true');
    await gone;
    const orphan = await engine.createContainer({
      ...containerCreateBody({
        sessionId: `orphan${process.pid}`,
        image,
        limits: defaultSandboxLimits,
        nowMs: Date.now(),
        ownerPid: gone.pid ?? 999_999,
      }),
      name: `datalyst-orphan-${process.pid}`,
    } as Docker.ContainerCreateOptions);

    const out = path.join(scratch, 'run');
    const child = datalyst([
      'analyze',
      workspace,
      'Which region has the most revenue?',
      '--offline',
      '--out',
      out,
    ]);
    // While it runs: the session's container on the remote engine has no bind mount.
    const seen: Docker.ContainerInspectInfo[] = [];
    const watching = (async () => {
      while (child.exitCode === null && seen.length === 0) {
        const [running] = await sessionContainers(`${containerLabels.ownerPid}=${child.pid}`);
        if (running !== undefined) {
          // A container listed may be gone by the time it is inspected: look again.
          const inspected = await engine
            .getContainer(running.Id)
            .inspect()
            .catch(() => undefined);
          if (inspected !== undefined) {
            seen.push(inspected);
            return;
          }
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const run = await child;
    await watching;
    expect(run.exitCode, run.all).toBe(0);
    expect(run.stdout).toContain('✓ Answered');

    expect(seen.length, 'the session container was seen on the remote engine').toBe(1);
    const [container] = seen;
    expect(container?.Mounts.filter((mount) => mount.Type === 'bind')).toEqual([]);
    expect(container?.HostConfig.Binds ?? []).toEqual([]);
    expect(container?.HostConfig.Runtime).toBe('runc');

    // The inputs arrived: the profile, computed inside the remote sandbox, read every row.
    const records = await readTrace(path.join(out, 'trace.jsonl'));
    const start = records.find((record) => record.type === 'run-start');
    expect(start?.environment).toMatchObject({ sandboxBackend: 'docker', image, runtime: 'runc' });
    const profile = records.find((record) => record.type === 'workspace-profile');
    const profileText = JSON.stringify(profile);
    expect(profileText).toContain('"rows":4');
    expect(profileText).toContain('"name":"revenue"');
    expect(records.some((record) => record.type === 'execution')).toBe(true);
    expect(records.at(-1)).toMatchObject({ type: 'run-end', termination: { reason: 'answered' } });
    const html = await readFile(path.join(out, 'report.html'), 'utf8');
    expect(html).toContain('west');

    // The reaper of that run removed the orphan on the remote engine.
    await expect(orphan.inspect()).rejects.toMatchObject({ statusCode: 404 });
    // Nothing of the run is left there.
    expect(await sessionContainers(`${containerLabels.ownerPid}=${child.pid}`)).toEqual([]);
    expect(await sessionContainers(containerLabels.session)).toEqual([]);
  });

  it('SIGTERM mid-run removes the session container on the remote engine', async () => {
    const out = path.join(scratch, 'terminated');
    const child = datalyst(['analyze', workspace, '--offline', '--out', out]);
    let signalled = false;
    while (child.exitCode === null && !signalled) {
      const running = await sessionContainers(`${containerLabels.ownerPid}=${child.pid}`);
      if (running.length > 0) {
        child.kill('SIGTERM');
        signalled = true;
      } else {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    const run = await child;
    expect(signalled, run.all).toBe(true);
    expect(run.exitCode, run.all).not.toBe(0);
    expect(await sessionContainers(`${containerLabels.ownerPid}=${child.pid}`)).toEqual([]);
    expect(await sessionContainers(containerLabels.session)).toEqual([]);
  });
});
