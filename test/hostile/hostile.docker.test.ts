import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatalystError } from '../../src/errors/index.ts';
import {
  containerLabels,
  createSandbox,
  type CellResult,
  type SandboxLimits,
  type SandboxSession,
} from '../../src/sandbox/index.ts';
import { describeResult, hostileCases, oneLine, processListCode, type HostileCase } from './cases.ts';
import { hashTree } from '../support/hash-tree.ts';

/**
 * Runs every hostile case (cases.ts) in a fresh session of the real Docker
 * sandbox, asserts its safe outcome, that the session still runs `1 + 1`
 * afterwards, that the host workspace kept every hash, and that closing the
 * session leaves no container. Writes test-artifacts/hostile-outcomes.md.
 */

const hostCanary = `host-canary-${Math.random().toString(36).slice(2)}`;
process.env['DATALYST_HOSTILE_CANARY'] = hostCanary;

interface OutcomeRow {
  id: string;
  attack: string;
  safeOutcome: string;
  observed: string;
  recovery: string;
  verdict: 'safe' | 'FAILED';
}

const docker = new Docker();
const outcomes: OutcomeRow[] = [];
let workspaceDir: string;
let workspaceHashes: Map<string, string>;

async function containersOf(sessionId: string): Promise<string[]> {
  const containers = await docker.listContainers({
    all: true,
    filters: { label: [`${containerLabels.session}=${sessionId}`] },
  });
  return containers.map((container) => `${container.Id.slice(0, 12)} ${container.State}`);
}

function isSandboxFailure(error: unknown): boolean {
  return DatalystError.isInstance(error) && error.code === 'SANDBOX_FAILURE';
}

async function expectOnePlusOne(session: SandboxSession): Promise<void> {
  const result = await session.execute('1 + 1', { timeoutMs: 30_000 });
  expect(result.status, describeResult(result)).toBe('ok');
  expect(result.value).toBe('2');
}

async function runCase(hostileCase: HostileCase, row: OutcomeRow): Promise<void> {
  const sessions: SandboxSession[] = [];
  const notes: string[] = [];
  const open = async (options: { workspaceDir?: string; limits?: Partial<SandboxLimits> } = {}) => {
    const session = await createSandbox({
      ...(options.workspaceDir === undefined ? {} : { workspaceDir: options.workspaceDir }),
      limits: { ...hostileCase.limits, ...options.limits },
    });
    sessions.push(session);
    return session;
  };
  try {
    const session = await open({ workspaceDir });
    if (hostileCase.setup) {
      const setup = await session.execute(hostileCase.setup);
      expect(setup.status, describeResult(setup)).toBe('ok');
    }
    let result: CellResult | undefined;
    const started = performance.now();
    try {
      result = await session.execute(hostileCase.code, { timeoutMs: hostileCase.timeoutMs ?? 20_000 });
    } catch (error) {
      if (!hostileCase.mayEndSession || !isSandboxFailure(error)) throw error;
      row.observed = `session ended: SandboxFailureError "${oneLine((error as Error).message, 100)}"`;
    }
    const elapsedMs = Math.round(performance.now() - started);
    if (result) {
      row.observed = `${describeResult(result)} (${elapsedMs} ms)`;
      await hostileCase.verify(result, {
        session,
        workspaceDir,
        hostCanary,
        createSession: open,
        note: (text) => notes.push(text),
      });
    } else {
      row.observed += ` (${elapsedMs} ms)`;
    }
    let survivor: SandboxSession | undefined = session;
    try {
      await expectOnePlusOne(session);
      row.recovery = 'same session ran 1 + 1';
    } catch (error) {
      if (!hostileCase.mayEndSession || !isSandboxFailure(error)) throw error;
      survivor = undefined;
      await expectOnePlusOne(await open());
      row.recovery = 'session ended with SandboxFailureError; a new session ran 1 + 1';
    }
    if (survivor) {
      for (const followUp of hostileCase.followUps ?? []) {
        const after = await survivor.execute(followUp.code, { timeoutMs: 30_000 });
        followUp.check(after);
      }
      const processes = await survivor.execute(processListCode, { timeoutMs: 30_000 });
      notes.push(`processes after: ${processes.value ?? describeResult(processes)}`);
      if (hostileCase.noStrayProcesses) {
        // The supervisor (PID 1) and the worker, and nothing else alive: killed
        // children of the worker may stay zombies (no CPU) until it waits.
        const alive = [...(processes.value ?? '').matchAll(/'([^':]+):(\w)'/g)]
          .filter((match) => match[2] !== 'Z')
          .map((match) => match[1]);
        expect(alive, describeResult(processes)).toEqual(['python3', 'python3']);
      }
    }
    expect(await hashTree(workspaceDir)).toEqual(workspaceHashes);
    row.verdict = 'safe';
  } finally {
    for (const session of sessions) {
      await session.close();
      expect(await containersOf(session.id)).toEqual([]);
    }
    if (notes.length > 0) row.observed += `; ${notes.join('; ')}`;
  }
}

beforeAll(async () => {
  workspaceDir = await mkdtemp(join(tmpdir(), 'datalyst-hostile-'));
  await writeFile(join(workspaceDir, 'sales.csv'), 'region,amount\nnorth,10\nsouth,20\n');
  await mkdir(join(workspaceDir, 'sub'));
  await writeFile(join(workspaceDir, 'sub', 'notes.json'), JSON.stringify({ note: 'keep me' }));
  await writeFile(join(workspaceDir, 'binary.bin'), Buffer.from([0, 1, 2, 255, 254]));
  workspaceHashes = await hashTree(workspaceDir);
});

afterAll(async () => {
  await rm(workspaceDir, { recursive: true, force: true });
  const lines = [
    '# Hostile-code suite: outcomes',
    '',
    `Measured on ${new Date().toISOString()} against the Docker sandbox. Each case ran in a fresh session; after it, the session (or, where marked, a new one) ran \`1 + 1\`, and the host workspace kept every SHA-256.`,
    '',
    '| # | case | attack | safe outcome required | observed | recovery | verdict |',
    '|---|------|--------|-----------------------|----------|----------|---------|',
    ...outcomes.map(
      (row, index) =>
        `| ${index + 1} | ${row.id} | ${cell(row.attack)} | ${cell(row.safeOutcome)} | ${cell(row.observed)} | ${cell(row.recovery)} | ${row.verdict} |`,
    ),
    '',
    `${outcomes.filter((row) => row.verdict === 'safe').length} of ${outcomes.length} cases safe.`,
    '',
  ];
  await mkdir('test-artifacts', { recursive: true });
  await writeFile('test-artifacts/hostile-outcomes.md', lines.join('\n'));
});

/** A table cell: pipes escaped, control characters (a case writes raw bytes) shown as \xNN. */
function cell(text: string): string {
  return Array.from(text.replace(/\n/g, ' ').replace(/\|/g, '\\|'), (character) => {
    const code = character.charCodeAt(0);
    return code < 0x20 || (code >= 0x7f && code < 0xa0)
      ? `\\x${code.toString(16).padStart(2, '0')}`
      : character;
  }).join('');
}

describe('hostile code in the Docker sandbox', () => {
  it('has at least 30 cases with unique ids', () => {
    expect(hostileCases.length).toBeGreaterThanOrEqual(30);
    expect(new Set(hostileCases.map((hostileCase) => hostileCase.id)).size).toBe(hostileCases.length);
  });

  for (const hostileCase of hostileCases) {
    it(`${hostileCase.id}: ${hostileCase.safeOutcome}`, async () => {
      const row: OutcomeRow = {
        id: hostileCase.id,
        attack: hostileCase.attack,
        safeOutcome: hostileCase.safeOutcome,
        observed: '',
        recovery: '',
        verdict: 'FAILED',
      };
      outcomes.push(row);
      try {
        await runCase(hostileCase, row);
      } catch (error) {
        row.observed += ` — failed: ${oneLine(String(error), 300)}`;
        throw error;
      }
    }, 300_000);
  }
});
