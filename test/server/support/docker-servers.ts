import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { createOfflineAnalyst } from '../../../src/index.ts';
import { startServer, type DatalystServer } from '../../../src/server/index.ts';
import { containersOwnedBy } from './docker-containers.ts';
import { startScriptedDockerServer, type ScriptedDockerServer } from './server-harness.ts';

/**
 * For a describe block of Docker server tests: an offline-analyst server and a scripted-model server on the
 * real sandbox, each with its own data folder, started before the block and closed after it, which then
 * checks that no container of this process is left. Read the servers in tests, not at collection time.
 */
export function useDockerServers(prefix: string): {
  offline(): DatalystServer;
  scripted(): ScriptedDockerServer;
} {
  let dataDir: string;
  let offline: DatalystServer | undefined;
  let scripted: ScriptedDockerServer | undefined;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), prefix));
    offline = await startServer({
      dataDir: path.join(dataDir, 'offline'),
      port: 0,
      modelId: 'datalyst-offline-analyst',
      engine: { createModel: () => createOfflineAnalyst() },
      maxConcurrentTurns: 2,
    });
    scripted = await startScriptedDockerServer({ dataDir: path.join(dataDir, 'scripted') });
  });

  afterAll(async () => {
    await offline?.close();
    await scripted?.close();
    await rm(dataDir, { recursive: true, force: true });
    expect(await containersOwnedBy(process.pid)).toEqual([]);
  });

  const started = <T>(server: T | undefined): T => {
    if (server === undefined) throw new Error('useDockerServers: the servers start in beforeAll');
    return server;
  };
  return { offline: () => started(offline), scripted: () => started(scripted) };
}
