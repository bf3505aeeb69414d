import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { WorkspaceProfile } from '../../src/index.ts';
import { createFakeSandbox, printed } from '../agent/support/fake-session.ts';
import { startFakeOpenAIServer } from '../support/fake-openai-server.ts';
import { shippedSchemaValidator } from '../support/json-schema-validator.ts';
import { removeTemporaryDirs, runDatalyst, temporaryDir } from './support/cli-harness.ts';

/**
 * `datalyst analyze --continue` in-process with the offline analyst: the real
 * options, trace, thread resume and report; only the sandbox is a fake.
 */

afterEach(removeTemporaryDirs);

/** What the sandbox's profile says of a workspace holding only a binary blob.csv. */
const nothingReadable: WorkspaceProfile = {
  truncated: false,
  files: [
    {
      path: 'blob.csv',
      sizeBytes: 64,
      format: 'csv',
      tables: [],
      error: 'UnicodeDecodeError: not text',
      notes: [],
    },
  ],
};

async function workspace(): Promise<string> {
  const dir = await temporaryDir('datalyst-continue-ws-');
  await writeFile(path.join(dir, 'sales.csv'), 'region,revenue\nnorth,10\nsouth,20\n');
  return dir;
}

/** A first run into a fresh folder; returns the folder and the sandbox used. */
async function firstRun(profile?: WorkspaceProfile) {
  const ws = await workspace();
  const out = path.join(await temporaryDir(), 'run');
  const sandbox = createFakeSandbox({
    run: () => printed('30\n'),
    ...(profile === undefined ? {} : { profile }),
  });
  const run = await runDatalyst(['analyze', ws, 'Total revenue?', '--offline', '--out', out], {
    createSandbox: sandbox.factory,
  });
  return { ws, out, sandbox, run };
}

describe('datalyst analyze --continue', () => {
  it('a follow-up on a run that ended no-data ends no-data too, exit 3, without a false answer', async () => {
    const { out, sandbox, run } = await firstRun(nothingReadable);
    expect(run.exitCode, run.stderr).toBe(3);
    const next = await runDatalyst(['analyze', '--continue', out, 'And by region?', '--offline'], {
      createSandbox: sandbox.factory,
    });
    expect(next.exitCode, next.stderr).toBe(3);
    expect(next.stdout).toContain('✗ No answer (no-data)');
    expect(next.stdout).not.toContain('Answered');
    expect(next.stdout).not.toContain('asked for the answer');
  });
});

describe('datalyst analyze --continue (closing line)', () => {
  it('says "in 1 round", not "in 1 rounds", for a follow-up answered at once', async () => {
    const server = await startFakeOpenAIServer({
      script: [
        { type: 'text', text: '<Answer>The total revenue is 30.</Answer>' },
        { type: 'text', text: '<Answer>North 10, south 20.</Answer>' },
      ],
    });
    try {
      const ws = await workspace();
      const out = path.join(await temporaryDir(), 'run');
      const sandbox = createFakeSandbox({ run: () => printed('30\n') });
      const model = ['--model', 'fake-model', '--base-url', server.baseUrl];
      const first = await runDatalyst(['analyze', ws, 'Total revenue?', ...model, '--out', out], {
        createSandbox: sandbox.factory,
      });
      expect(first.exitCode, first.stderr).toBe(0);
      const next = await runDatalyst(['analyze', '--continue', out, 'By region?', ...model], {
        createSandbox: sandbox.factory,
      });
      expect(next.exitCode, next.stderr).toBe(0);
      expect(next.stdout).toContain('✓ Answered (question 2) in 1 round\n');
    } finally {
      await server.close();
    }
  });
});

describe('datalyst analyze --continue --json', () => {
  it('ends with a report-end line, as analyze --json does, every line as the shipped schema says', async () => {
    const { out, sandbox } = await firstRun();
    const run = await runDatalyst(['analyze', '--continue', out, 'And by region?', '--offline', '--json'], {
      createSandbox: sandbox.factory,
    });
    expect(run.exitCode, run.stderr).toBe(0);
    const lines = run.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string });
    const validate = shippedSchemaValidator('json-lines.schema.json');
    for (const line of lines) expect(validate(line), JSON.stringify(line).slice(0, 200)).toEqual([]);
    expect(lines.map((line) => line.type)).toContain('turn-end');
    expect(lines.at(-1)).toMatchObject({
      type: 'report-end',
      outDir: out,
      files: expect.arrayContaining([{ format: 'html', path: path.join(out, 'report.html') }]),
    });
    // The people-facing closing lines go to stderr, off the JSON stream.
    expect(run.stderr).toContain('Report:');
  });
});

describe('datalyst analyze --continue (usage)', () => {
  it('refuses a workspace given beside --continue instead of ignoring it, exit 2, and runs nothing', async () => {
    const { out, sandbox } = await firstRun();
    const other = await workspace();
    const run = await runDatalyst(['analyze', other, '--continue', out, 'And by region?', '--offline'], {
      createSandbox: sandbox.factory,
    });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('✗ CONFIG_INVALID analyze --continue takes only the question');
    expect(run.stderr).toContain(`"${other}" would be ignored`);
    expect(run.stderr).toContain(`fix: Run \`datalyst analyze --continue ${out} "<question>"\``);
    expect(sandbox.sessions).toHaveLength(1);
  });

  it('says that --continue needs the question when none is given, not that a workspace is missing', async () => {
    const { out } = await firstRun();
    const run = await runDatalyst(['analyze', '--continue', out, '--offline']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('analyze --continue needs the question to add.');
    expect(run.stderr).not.toContain('workspace');
    // Without --continue a missing workspace is still commander's usage error.
    const plain = await runDatalyst(['analyze', '--offline']);
    expect(plain.exitCode).toBe(2);
    expect(plain.stderr).toContain("error: missing required argument 'workspace'");
    expect(plain.stderr).toContain('(add --help for usage)');
    const help = await runDatalyst(['analyze', '--help']);
    expect(help.stdout).toContain('Usage: datalyst analyze [options] <workspace> [instruction]');
  });
});
