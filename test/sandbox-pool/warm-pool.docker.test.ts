import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CancelledError } from '../../src/errors/index.ts';
import { containerLabels } from '../../src/sandbox/index.ts';
import { createWarmPool, type WarmPool } from '../../src/sandbox/warm-pool.ts';

const docker = new Docker();
let workspaceDir: string;

async function containersOfThisProcess(): Promise<string[]> {
  const containers = await docker.listContainers({
    all: true,
    filters: {
      label: [`${containerLabels.ownerPid}=${process.pid}`, `${containerLabels.ownerHost}=${hostname()}`],
    },
  });
  return containers.map((container) => container.Labels[containerLabels.session] ?? '?');
}

async function waitUntil(predicate: () => boolean, timeoutMs: number): Promise<void> {
  const started = Date.now();
  while (!predicate()) {
    if (Date.now() - started > timeoutMs) throw new Error(`not reached within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

beforeAll(async () => {
  workspaceDir = await mkdtemp(join(tmpdir(), 'datalyst-pool-'));
  await writeFile(join(workspaceDir, 'sales.csv'), 'region,amount\nnorth,10\nsouth,20\n');
});

afterAll(async () => {
  await rm(workspaceDir, { recursive: true, force: true });
});

describe('warm pool', () => {
  let pool: WarmPool;

  beforeAll(() => {
    pool = createWarmPool({ size: 2, limits: { memoryMb: 512 } });
  });

  afterAll(async () => {
    await pool.close();
  });

  it('hands out a ready session with the workspace copied in, and refills itself', async () => {
    await waitUntil(() => pool.stats.ready === 2, 60_000);
    await using session = await pool.acquire({ workspaceDir });
    expect(pool.stats.warmHits).toBe(1);
    const result = await session.execute("import pandas as pd\npd.read_csv('sales.csv')['amount'].sum()");
    expect(result.status).toBe('ok');
    expect(result.value).toBe('np.int64(30)');
    expect(session.limits.memoryMb).toBe(512);
    await waitUntil(() => pool.stats.ready === 2, 60_000);
  });

  it('leaves the folders it is told to out of the workspace (a run folder inside it)', async () => {
    // Regression: deepAnalyze with the caller's pool and its outDir inside the workspace profiled its own deep.json.
    await mkdir(join(workspaceDir, 'run'), { recursive: true });
    await writeFile(join(workspaceDir, 'run', 'deep.json'), '{}');
    try {
      await using session = await pool.acquire({ workspaceDir, excludeDirs: ['run'] });
      const listed = await session.execute(
        "import os\nsorted(os.path.join(d, f) for d, _, fs in os.walk('.') for f in fs)",
      );
      expect(listed.value).toBe("['./sales.csv']");
    } finally {
      await rm(join(workspaceDir, 'run'), { recursive: true, force: true });
    }
  });

  it('never hands a used container to another session', async () => {
    await waitUntil(() => pool.stats.ready === 2, 60_000);
    const first = await pool.acquire();
    const firstId = first.id;
    const marked = await first.execute(
      "secret = 'first-session'\nopen('/tmp/first-session', 'w').write('x')\nopen('mark.txt', 'w').write('x')",
    );
    expect(marked.status).toBe('ok');
    await first.close();
    expect(await containersOfThisProcess()).not.toContain(firstId);
    // Take every session the pool had, and one more that it has to start.
    const others = await Promise.all([pool.acquire(), pool.acquire(), pool.acquire()]);
    try {
      const ids = others.map((session) => session.id);
      expect(new Set([...ids, firstId]).size).toBe(4);
      for (const session of others) {
        const probe = await session.execute(
          "import os\n(globals().get('secret'), os.path.exists('/tmp/first-session'), os.path.exists('mark.txt'))",
        );
        expect(probe.value).toBe('(None, False, False)');
      }
    } finally {
      await Promise.all(others.map((session) => session.close()));
    }
  });
});

describe('warm pool cleanup', () => {
  async function waitForNoContainers(): Promise<void> {
    const started = Date.now();
    let left = await containersOfThisProcess();
    while (left.length > 0 && Date.now() - started < 30_000) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      left = await containersOfThisProcess();
    }
    expect(left).toEqual([]);
  }

  it('an acquire cancelled while the pool is empty leaves nothing behind', async () => {
    await waitForNoContainers();
    const empty = createWarmPool({ size: 0 });
    const controller = new AbortController();
    const acquiring = empty.acquire({ signal: controller.signal });
    setTimeout(() => controller.abort(new Error('cancelled by the test')), 300);
    await expect(acquiring).rejects.toBeInstanceOf(CancelledError);
    await empty.close();
    // The start in flight runs to its end and then removes its container.
    await waitForNoContainers();
  });

  it('close removes every session nobody took', async () => {
    const pool = createWarmPool({ size: 2 });
    await waitUntil(() => pool.stats.ready === 2, 60_000);
    expect(await containersOfThisProcess()).toHaveLength(2);
    await pool.close();
    expect(await containersOfThisProcess()).toEqual([]);
  });
});
