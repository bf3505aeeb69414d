import { readdirSync } from 'node:fs';
import { mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import Docker from 'dockerode';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { traceDocumentSchema, traceRecordSchema, type TraceRecord } from '../../src/index.ts';
import { notebookSchema } from '../../src/report/index.ts';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../support/fake-openai-server.ts';
import { removeTemporaryDirs, temporaryDir } from './support/cli-harness.ts';

/**
 * The real `datalyst` command as a person runs it: a child process, the real
 * Docker sandbox and runner image, the offline analyst, the report on disk.
 */

const projectRoot = path.resolve(import.meta.dirname, '../..');
const bin = path.join(projectRoot, 'bin', 'datalyst.js');
const examplesDir = path.join(projectRoot, 'workspace-examples');
const examples = readdirSync(examplesDir, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

// No colours and no inherited model settings: the runs must be offline and log-like.
const cleanEnv = {
  NO_COLOR: '1',
  DATALYST_MODEL: '',
  OPENAI_API_KEY: '',
  OPENAI_BASE_URL: '',
  DATALYST_BASE_URL: '',
  DATALYST_API_KEY: '',
};

function datalyst(args: readonly string[], env: Record<string, string> = {}) {
  return execa(process.execPath, [bin, ...args], {
    cwd: projectRoot,
    env: { ...cleanEnv, ...env },
    reject: false,
    all: true,
  });
}

const exists = (file: string) =>
  stat(file).then(
    () => true,
    () => false,
  );

async function readTraceLines(file: string): Promise<TraceRecord[]> {
  return (await readFile(file, 'utf8'))
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => traceRecordSchema.parse(JSON.parse(line)));
}

afterAll(removeTemporaryDirs);

describe('datalyst analyze --offline on every example workspace', () => {
  it('has example workspaces to run', () => {
    expect(examples.length).toBeGreaterThanOrEqual(4);
  });

  for (const example of examples) {
    it(`analyses workspace-examples/${example} into a report with charts`, async () => {
      const out = path.join(await temporaryDir(), 'run');
      const workspace = path.join(examplesDir, example);
      const instructionFile = path.join(workspace, 'instruction.txt');
      const instruction = (await exists(instructionFile))
        ? (await readFile(instructionFile, 'utf8')).trim()
        : '';
      const run = await datalyst([
        'analyze',
        workspace,
        ...(instruction ? [instruction] : []),
        '--offline',
        '--out',
        out,
      ]);
      expect(run.exitCode, run.all).toBe(0);
      expect(run.stdout).toContain('✓ Answered');
      expect(run.stdout).toContain(`Report: ${path.join(out, 'report.html')}`);

      const html = await readFile(path.join(out, 'report.html'), 'utf8');
      const charts = (html.match(/<svg[\s>]/g) ?? []).length + (html.match(/<img\s/g) ?? []).length;
      expect(charts, 'charts in report.html').toBeGreaterThanOrEqual(2);
      expect(html.toLowerCase()).toContain('no language model');

      const notebook = notebookSchema.parse(
        JSON.parse(await readFile(path.join(out, 'analysis.ipynb'), 'utf8')),
      );
      expect(notebook.nbformat).toBe(4);
      expect(notebook.cells.filter((cell) => cell.cell_type === 'code').length).toBeGreaterThan(2);

      const document = traceDocumentSchema.parse(
        JSON.parse(await readFile(path.join(out, 'trace.json'), 'utf8')),
      );
      expect(document.records.at(-1)).toMatchObject({ type: 'run-end', termination: { reason: 'answered' } });
      const lines = await readTraceLines(path.join(out, 'trace.jsonl'));
      expect(lines.length).toBe(document.records.length);
      expect(await exists(path.join(out, 'report.md'))).toBe(true);
    });
  }
});

describe('Ctrl-C', () => {
  it('stops the run, writes the partial trace and a report marked cancelled, removes the container and exits 130', async () => {
    const out = path.join(await temporaryDir(), 'run');
    const child = datalyst(['analyze', path.join(examplesDir, 'student-loan'), '--offline', '--out', out]);
    let sent = false;
    child.stdout.on('data', (chunk: Buffer) => {
      // The second cell is running: the container and kernel are up, the trace has steps.
      if (!sent && chunk.toString().includes('E2 running')) {
        sent = true;
        child.kill('SIGINT');
      }
    });
    const pid = child.pid;
    const run = await child;
    expect(sent, run.all).toBe(true);
    expect(run.exitCode, run.all).toBe(130);
    expect(run.stdout).toContain('Cancelling');
    expect(run.stdout).toContain('■ Cancelled');

    const records = await readTraceLines(path.join(out, 'trace.jsonl'));
    expect(records.some((record) => record.type === 'execution')).toBe(true);
    expect(records.at(-1)).toMatchObject({ type: 'run-end', termination: { reason: 'cancelled' } });
    expect(records.some((record) => record.type === 'run-end' && record.answer !== null)).toBe(false);
    const html = await readFile(path.join(out, 'report.html'), 'utf8');
    expect(html.toLowerCase()).toContain('cancelled');

    const containers = await new Docker().listContainers({
      all: true,
      filters: { label: [`org.datalyst.owner-pid=${pid}`] },
    });
    expect(containers).toEqual([]);
  });
});

describe('bad input, from the real command', () => {
  it('exits 2 for a missing workspace, a file, an empty folder, an existing report and an unknown option', async () => {
    const base = await temporaryDir();
    await mkdir(path.join(base, 'empty'));
    await mkdir(path.join(base, 'previous'));
    await writeFile(path.join(base, 'previous', 'report.html'), 'keep me');
    const sales = path.join(examplesDir, 'sales');
    const cases: [string[], string][] = [
      [['analyze', path.join(base, 'missing')], 'does not exist'],
      [['analyze', path.join(sales, 'orders.csv')], 'is a file, not a folder'],
      [['analyze', path.join(base, 'empty')], 'is empty'],
      [['analyze', sales, '--offline', '--out', path.join(base, 'previous')], 'already holds files'],
      [['analyze', sales, '--max-workspace-mb', '0.01'], 'above the cap'],
      [['analyze', sales, '--frobnicate'], "unknown option '--frobnicate'"],
    ];
    for (const [args, message] of cases) {
      const run = await datalyst(args);
      expect(run.exitCode, args.join(' ')).toBe(2);
      expect(run.stderr, args.join(' ')).toContain(message);
    }
    expect(await readFile(path.join(base, 'previous', 'report.html'), 'utf8')).toBe('keep me');
    expect(await readdir(path.join(base, 'empty'))).toEqual([]);
  });

  it('analyses the readable files of a workspace with a corrupt one, which the profile marks', async () => {
    const workspace = await temporaryDir('datalyst-ws-');
    await writeFile(path.join(workspace, 'sales.csv'), 'region,revenue\nnorth,10\nsouth,20\neast,30\n');
    await writeFile(path.join(workspace, 'broken.xlsx'), 'this is not a zip file');
    await writeFile(path.join(workspace, 'notes.pdf'), '%PDF-1.4');
    const out = path.join(await temporaryDir(), 'run');
    const run = await datalyst(['analyze', workspace, '--offline', '--out', out]);
    expect(run.exitCode, run.all).toBe(0);
    expect(run.stdout).toContain('! notes.pdf: unsupported type (.pdf); skipped');
    expect(run.stdout).toMatch(/! broken\.xlsx: could not be read/);
    expect(await exists(path.join(out, 'report.html'))).toBe(true);
  });

  it('exits 4 when no Docker engine answers, and leaves no run folder', async () => {
    const out = path.join(await temporaryDir(), 'run');
    const run = await datalyst(['analyze', path.join(examplesDir, 'sales'), '--offline', '--out', out], {
      DOCKER_HOST: 'unix:///nonexistent/docker.sock',
    });
    expect(run.exitCode, run.all).toBe(4);
    expect(run.stderr).toContain('SANDBOX_UNAVAILABLE');
    expect(run.stderr).toContain('fix:');
    expect(await exists(out)).toBe(false);
  });
});

describe('with a model endpoint', () => {
  let server: FakeOpenAIServer | undefined;
  afterAll(async () => server?.close());

  it('exits 5 before the sandbox starts when the endpoint does not serve the model, and doctor says which models it serves', async () => {
    server = await startFakeOpenAIServer({ models: ['DeepAnalyze-8B'], script: [] });
    const out = path.join(await temporaryDir(), 'run');
    const run = await datalyst([
      'analyze',
      path.join(examplesDir, 'sales'),
      '--model',
      'gpt-nothing',
      '--base-url',
      server.baseUrl,
      '--out',
      out,
    ]);
    expect(run.exitCode, run.all).toBe(5);
    // The pre-flight finds it before a container starts: no run folder.
    expect(run.stderr).toContain('MODEL_UNAVAILABLE');
    expect(run.stderr).toContain('it serves DeepAnalyze-8B');
    expect(await exists(out)).toBe(false);

    const doctor = await datalyst(['doctor', '--model', 'gpt-nothing', '--base-url', server.baseUrl]);
    expect(doctor.exitCode, doctor.all).toBe(5);
    expect(doctor.stdout).toContain('✗ Model');
    expect(doctor.stdout).toContain('it serves DeepAnalyze-8B');
    const good = await datalyst(['doctor'], {
      DATALYST_MODEL: 'DeepAnalyze-8B',
      DATALYST_BASE_URL: server.baseUrl,
    });
    expect(good.exitCode, good.all).toBe(0);
    expect(good.stdout).toContain('✓ Model');
    expect(good.stdout).toContain('(profile deepanalyze)');
  });
});

describe('setup and doctor', () => {
  it('doctor finds Docker, its limits and the runner image', async () => {
    const run = await datalyst(['doctor']);
    expect(run.exitCode, run.all).toBe(0);
    expect(run.stdout).toMatch(/^✓ Docker +engine /m);
    expect(run.stdout).toMatch(/^✓ Limits +memory, swap and pids limits enforced/m);
    expect(run.stdout).toMatch(/^✓ Runner image +datalyst\/python-runner:[0-9a-f]{16}/m);
    expect(run.stdout).toMatch(/^– Model +none configured/m);
  });

  it('doctor exits 4 and says how to start an engine when none answers', async () => {
    const run = await datalyst(['doctor'], { DOCKER_HOST: 'unix:///nonexistent/docker.sock' });
    expect(run.exitCode, run.all).toBe(4);
    expect(run.stdout).toMatch(/^✗ Docker/m);
    expect(run.stdout).toContain('fix:');
  });

  it('setup finds the runner image up to date', async () => {
    const run = await datalyst(['setup']);
    expect(run.exitCode, run.all).toBe(0);
    expect(run.stdout).toMatch(/The runner image datalyst\/python-runner:[0-9a-f]{16} is up to date\./);
  });
});
