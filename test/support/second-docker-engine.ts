import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, open, readdir, rename, rm, writeFile } from 'node:fs/promises';
import Docker from 'dockerode';
import { execa } from 'execa';

/**
 * A SECOND Docker engine for one test file: its own data root, exec root,
 * pid file and a bridge of its own, no iptables, so that starting and
 * stopping it disturbs nobody else on the machine (the main engine, the
 * other engineers' containers). Not `--bridge none`: with it dockerd deletes
 * the interface named docker0 at start, the main engine's bridge included
 * (measured: the main engine's image builds then failed).
 *
 * Optionally it lives in a network namespace of its own, reached over a veth
 * pair with addresses only the test uses, and listens on TCP with TLS
 * (certificates made by the test): a remote engine, as DOCKER_HOST sees one.
 * Needs root, dockerd and iproute2 (as the test command's setup has).
 */

export interface TlsListener {
  /** Folder with ca.pem, server-cert.pem and server-key.pem. */
  certDir: string;
  port: number;
}

export interface SecondEngineOptions {
  /** Part of every path and interface name: `outage`, `remote`. */
  name: string;
  /** Three letters that start the interface names (at most 15 characters in all). */
  interfacePrefix: string;
  /** The second octet of the engine's addresses, 10.<octet>.x.y; one per test file. */
  subnetOctet: number;
  /** Run dockerd in a network namespace of its own, listening on TCP with TLS on the veth address. */
  tls?: TlsListener;
}

async function linkExists(name: string, namespace?: string): Promise<boolean> {
  const command = namespace === undefined ? ['link', 'show', name] : ['-n', namespace, 'link', 'show', name];
  return (await execa('ip', command, { reject: false })).exitCode === 0;
}

async function namespaceExists(name: string): Promise<boolean> {
  const { stdout } = await execa('ip', ['netns', 'list'], { reject: false });
  return stdout.split('\n').some((line) => line.split(' ')[0] === name);
}

export class SecondDockerEngine {
  /** Paths of this run only: two test runs at once must not share a daemon's socket, pid file or data root. */
  readonly runId = String(process.pid);
  readonly socketPath: string;
  readonly dataRoot: string;
  readonly execRoot: string;
  readonly pidFile: string;
  readonly logFile: string;
  /** An empty daemon.json of its own: the host's /etc/docker/daemon.json is the main engine's. */
  readonly configFile: string;
  readonly bridge: string;
  readonly bridgeAddress: string;
  /** The network namespace, when the engine has one. */
  readonly namespace: string | undefined;
  /** The host end of the veth pair and the engine's end (inside the namespace). */
  readonly hostVeth: string;
  readonly engineVeth: string;
  /** The engine's address on the veth pair, e.g. 10.214.7.2. */
  readonly engineAddress: string;
  readonly hostAddress: string;
  private daemon: ChildProcess | undefined;
  private mainBridgeExisted = false;

  constructor(
    private readonly options: SecondEngineOptions,
    /** How this test talks to it; default the unix socket (no TLS engine) . */
    private readonly clientFor: (engine: SecondDockerEngine) => Docker = (engine) =>
      new Docker({ socketPath: engine.socketPath }),
  ) {
    const { name, interfacePrefix, subnetOctet } = options;
    const runId = this.runId;
    const third = Number(runId) % 250;
    this.socketPath = `/tmp/datalyst-${name}-${runId}.sock`;
    this.dataRoot = `/var/tmp/datalyst-${name}-${runId}`;
    this.execRoot = `/tmp/datalyst-${name}-${runId}-exec`;
    this.pidFile = `/tmp/datalyst-${name}-${runId}.pid`;
    this.logFile = `/tmp/datalyst-${name}-${runId}-dockerd.log`;
    this.configFile = `/tmp/datalyst-${name}-${runId}-daemon.json`;
    this.bridge = `${interfacePrefix}${runId.slice(-7)}`;
    this.bridgeAddress = `10.${subnetOctet}.${third}.129/25`;
    this.namespace = options.tls === undefined ? undefined : `datalyst-${name}-${runId}`;
    this.hostVeth = `${interfacePrefix}h${runId.slice(-7)}`;
    this.engineVeth = `${interfacePrefix}e${runId.slice(-7)}`;
    this.hostAddress = `10.${subnetOctet}.${third}.1`;
    this.engineAddress = `10.${subnetOctet}.${third}.2`;
  }

  /** The client this test uses (unix socket, or TCP with the client certificate). */
  client(): Docker {
    return this.clientFor(this);
  }

  /** `-H …` and TLS flags for the docker CLI. */
  cliArgs(clientCertDir?: string): string[] {
    if (this.options.tls === undefined) return ['-H', `unix://${this.socketPath}`];
    if (clientCertDir === undefined) throw new Error('a TLS engine needs the client certificates');
    return [
      '--tlsverify',
      '--tlscacert',
      `${clientCertDir}/ca.pem`,
      '--tlscert',
      `${clientCertDir}/cert.pem`,
      '--tlskey',
      `${clientCertDir}/key.pem`,
      '-H',
      `tcp://${this.engineAddress}:${this.options.tls.port}`,
    ];
  }

  /** Creates the namespace, veth pair and bridge (once), then starts dockerd and waits for it to answer. */
  async start(): Promise<void> {
    this.mainBridgeExisted = await linkExists('docker0');
    await this.createNetwork();
    await mkdir(this.dataRoot, { recursive: true });
    const log = await open(this.logFile, 'a');
    await writeFile(this.configFile, '{}\n');
    const dockerdArgs = [
      '--config-file',
      this.configFile,
      '--data-root',
      this.dataRoot,
      '--exec-root',
      this.execRoot,
      '--pidfile',
      this.pidFile,
      '--bridge',
      this.bridge,
      '--iptables=false',
      '--ip-masq=false',
      '--ip-forward=false',
    ];
    const { tls } = this.options;
    if (tls === undefined) {
      this.daemon = spawn('dockerd', ['-H', `unix://${this.socketPath}`, ...dockerdArgs], {
        stdio: ['ignore', log.fd, log.fd],
      });
    } else {
      // nsenter --net: only the network namespace changes (`ip netns exec` would
      // also give dockerd a mount namespace of its own).
      this.daemon = spawn(
        'nsenter',
        [
          `--net=/var/run/netns/${this.namespace}`,
          'dockerd',
          '-H',
          `tcp://${this.engineAddress}:${tls.port}`,
          '--tlsverify',
          '--tlscacert',
          `${tls.certDir}/ca.pem`,
          '--tlscert',
          `${tls.certDir}/server-cert.pem`,
          '--tlskey',
          `${tls.certDir}/server-key.pem`,
          ...dockerdArgs,
        ],
        { stdio: ['ignore', log.fd, log.fd] },
      );
    }
    this.daemon.once('exit', () => void log.close());
    const client = this.client();
    for (let attempt = 0; attempt < 300; attempt++) {
      const ready =
        (tls !== undefined || existsSync(this.socketPath)) &&
        (await client.ping().then(
          () => true,
          () => false,
        ));
      if (ready) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`the test engine did not answer within 30 s; see ${this.logFile}`);
  }

  /** Stops the engine the way a service manager does (SIGTERM) and waits for it to exit. */
  async stop(): Promise<void> {
    const running = this.daemon;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
    running.kill('SIGTERM');
    await exited;
    this.daemon = undefined;
  }

  /**
   * Copies the runner image from the main engine, through a saved copy kept
   * between runs (saving 1 GB takes longer than loading it); one archive per
   * image, shared by every test engine.
   */
  async loadImage(image: string, clientCertDir?: string): Promise<void> {
    const present = await this.client()
      .getImage(image)
      .inspect()
      .then(
        () => true,
        () => false,
      );
    if (present) return;
    const archive = `/var/tmp/datalyst-outage-image-${image.replace(/[^A-Za-z0-9_.-]/g, '_')}.tar`;
    if (!existsSync(archive)) {
      // One archive at a time: the copies of older images go.
      for (const name of await readdir('/var/tmp')) {
        if (/^datalyst-outage-image-.*\.tar$/.test(name)) await rm(`/var/tmp/${name}`, { force: true });
      }
      await execa('docker', ['save', '-o', `${archive}.${this.runId}`, image]);
      await rename(`${archive}.${this.runId}`, archive);
    }
    await execa('docker', [...this.cliArgs(clientCertDir), 'load', '-q', '-i', archive]);
  }

  /** Stops the engine and removes everything it and `start` made; checks the main bridge was not touched. */
  async dispose(): Promise<void> {
    await this.stop();
    if (this.namespace !== undefined) {
      if (await linkExists(this.hostVeth)) await execa('ip', ['link', 'del', this.hostVeth]);
      if (await namespaceExists(this.namespace)) await execa('ip', ['netns', 'del', this.namespace]);
    } else if (await linkExists(this.bridge)) {
      await execa('ip', ['link', 'del', this.bridge]);
    }
    // dockerd leaves its data root bind-mounted on itself.
    await execa('umount', [this.dataRoot], { reject: false });
    await rm(this.dataRoot, { recursive: true, force: true });
    await rm(this.execRoot, { recursive: true, force: true });
    await rm(this.configFile, { force: true });
    if ((await linkExists('docker0')) !== this.mainBridgeExisted) {
      throw new Error('the test engine changed the main engine’s bridge docker0');
    }
  }

  private async createNetwork(): Promise<void> {
    const ns = this.namespace;
    if (ns === undefined) {
      if (await linkExists(this.bridge)) return;
      await execa('ip', ['link', 'add', 'name', this.bridge, 'type', 'bridge']);
      await execa('ip', ['addr', 'add', this.bridgeAddress, 'dev', this.bridge]);
      await execa('ip', ['link', 'set', this.bridge, 'up']);
      return;
    }
    if (!(await namespaceExists(ns))) await execa('ip', ['netns', 'add', ns]);
    const inside = (...args: string[]) => execa('ip', ['-n', ns, ...args]);
    await inside('link', 'set', 'lo', 'up');
    if (!(await linkExists(this.hostVeth))) {
      await execa('ip', [
        'link',
        'add',
        this.hostVeth,
        'type',
        'veth',
        'peer',
        'name',
        this.engineVeth,
        'netns',
        ns,
      ]);
      await execa('ip', ['addr', 'add', `${this.hostAddress}/30`, 'dev', this.hostVeth]);
      await execa('ip', ['link', 'set', this.hostVeth, 'up']);
      await inside('addr', 'add', `${this.engineAddress}/30`, 'dev', this.engineVeth);
      await inside('link', 'set', this.engineVeth, 'up');
    }
    if (!(await linkExists(this.bridge, ns))) {
      await inside('link', 'add', 'name', this.bridge, 'type', 'bridge');
      await inside('addr', 'add', this.bridgeAddress, 'dev', this.bridge);
      await inside('link', 'set', this.bridge, 'up');
    }
  }
}
