import { EventEmitter } from 'node:events';
import { spawnSync } from 'node:child_process';
import { chmod, mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { traceRecordSchema, type TraceRecord } from '../../src/index.ts';
import { createFakeSandbox, printed, slowCell } from '../agent/support/fake-session.ts';
import {
  startFakeOpenAIServer,
  type FakeOpenAIServer,
  type ScriptEntry,
} from '../support/fake-openai-server.ts';
import { shippedSchemaValidator } from '../support/json-schema-validator.ts';
import {
  removeTemporaryDirs,
  runDatalyst,
  temporaryDir,
  type CliHarnessOptions,
} from './support/cli-harness.ts';

/**
 * `datalyst analyze` in-process: the real options, checks, agent loop, model
 * client (over real HTTP to a fake OpenAI server) and report renderer; only
 * the sandbox session is a fake (the Docker test runs the real one).
 */

const servers: FakeOpenAIServer[] = [];

afterEach(async () => {
  while (servers.length > 0) await servers.pop()?.close();
  await removeTemporaryDirs();
});

async function server(script: readonly ScriptEntry[], models?: readonly string[]): Promise<FakeOpenAIServer> {
  const started = await startFakeOpenAIServer({ script, ...(models === undefined ? {} : { models }) });
  servers.push(started);
  return started;
}

async function workspace(): Promise<string> {
  const dir = await temporaryDir('datalyst-ws-');
  await writeFile(path.join(dir, 'sales.csv'), 'region,revenue\nnorth,10\nsouth,20\n');
  return dir;
}

async function traceOf(outDir: string): Promise<TraceRecord[]> {
  const text = await readFile(path.join(outDir, 'trace.jsonl'), 'utf8');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => traceRecordSchema.parse(JSON.parse(line)));
}

const exists = (file: string) =>
  stat(file).then(
    () => true,
    () => false,
  );

const analysisReply =
  "<Analyze>Sum the revenue.</Analyze>\n<Code>\n```python\nimport pandas as pd\nprint(pd.read_csv('sales.csv').revenue.sum())\n```\n</Code>";
const answerReply = '<Answer>The total revenue is 30.</Answer>';

describe('datalyst (usage)', () => {
  it('prints help with the exit codes and exits 0', async () => {
    const run = await runDatalyst(['--help']);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain('Usage: datalyst');
    expect(run.stdout).toContain('130  cancelled');
    const analyze = await runDatalyst(['analyze', '--help']);
    expect(analyze.exitCode).toBe(0);
    expect(analyze.stdout).toContain('--max-workspace-mb');
    expect(analyze.stdout).toContain('Examples:');
  });

  it('exits 2 on a missing command, an unknown command or option, or a missing argument', async () => {
    for (const argv of [[], ['analyse'], ['analyze'], ['analyze', 'data', '--colour']]) {
      const run = await runDatalyst(argv);
      expect(run.exitCode, argv.join(' ')).toBe(2);
      expect(run.stderr.length, argv.join(' ')).toBeGreaterThan(0);
    }
  });
});

describe('datalyst analyze (bad input)', () => {
  it('exits 2 with the fix for a missing workspace, and creates no run folder', async () => {
    const cwd = await temporaryDir();
    const run = await runDatalyst(['analyze', 'no-such-folder'], { cwd });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('✗ WORKSPACE_INVALID');
    expect(run.stderr).toContain('does not exist');
    expect(run.stderr).toContain('fix:');
    expect(await readdir(cwd)).toEqual([]);
  });

  it('exits 2 for a file, an empty folder, and a folder without data files', async () => {
    const cwd = await temporaryDir();
    await writeFile(path.join(cwd, 'sales.csv'), 'a\n1\n');
    await mkdir(path.join(cwd, 'empty'));
    await mkdir(path.join(cwd, 'docs'));
    await writeFile(path.join(cwd, 'docs', 'report.docx'), 'x');
    const cases: Record<string, string> = {
      'sales.csv': 'is a file, not a folder',
      empty: 'is empty',
      docs: 'no data file',
    };
    for (const [target, message] of Object.entries(cases)) {
      const run = await runDatalyst(['analyze', target], { cwd });
      expect(run.exitCode, target).toBe(2);
      expect(run.stderr, target).toContain(message);
    }
  });

  it('says before the run, with the fix, that --format pdf needs a Chromium that is not there', async () => {
    const ws = await workspace();
    const cwd = await temporaryDir();
    let sandboxPrepared = false;
    const run = await runDatalyst(['analyze', ws, '--offline', '--format', 'html,pdf'], {
      cwd,
      env: { DATALYST_CHROMIUM: path.join(cwd, 'no-chromium') },
      prepareSandbox: () => {
        sandboxPrepared = true;
        return Promise.resolve(undefined);
      },
    });
    expect(run.exitCode).toBe(4);
    expect(run.stderr).toContain('CHROMIUM_UNAVAILABLE');
    expect(run.stderr).toContain('apt-get install chromium');
    expect(sandboxPrepared).toBe(false);
    expect(await readdir(cwd)).toEqual([]);
  });

  it('refuses a workspace above --max-workspace-mb and shows its size', async () => {
    const cwd = await temporaryDir();
    await mkdir(path.join(cwd, 'big'));
    await writeFile(path.join(cwd, 'big', 'wide.csv'), Buffer.alloc(2 * 1024 * 1024, 'x'));
    const run = await runDatalyst(['analyze', 'big', '--max-workspace-mb', '1'], { cwd });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('holds 2.0 MB in 1 files, above the cap of 1.0 MB');
  });

  it('never overwrites an existing report folder, and says so before the slow checks (Docker, the image)', async () => {
    const ws = await workspace();
    const out = await temporaryDir();
    await writeFile(path.join(out, 'report.html'), 'previous');
    for (const deep of [[], ['--deep']]) {
      let sandboxPrepared = false;
      const run = await runDatalyst(['analyze', ws, '--offline', '--out', out, ...deep], {
        prepareSandbox: () => {
          sandboxPrepared = true;
          return Promise.resolve(undefined);
        },
      });
      expect(run.exitCode).toBe(2);
      expect(run.stderr).toContain('already holds files');
      expect(sandboxPrepared).toBe(false);
    }
    expect(await readFile(path.join(out, 'report.html'), 'utf8')).toBe('previous');
  });

  it('exits 2 for bad option values and config files, naming the option or key', async () => {
    const ws = await workspace();
    const configDir = await temporaryDir();
    await writeFile(path.join(configDir, 'team.json'), '{"maxRound": 4}');
    const cases: [string[], string][] = [
      [['--format', 'html,docx'], '"docx"'],
      [['--cell-timeout', 'soon'], '--cell-timeout'],
      [['--offline', '--model', 'm'], '--offline'],
      [['--sandbox', 'vm'], '--sandbox'],
      [['--config', path.join(configDir, 'team.json')], 'unknown key "maxRound"'],
      [['--config', path.join(configDir, 'missing.json')], 'Cannot read the config file'],
    ];
    for (const [flags, message] of cases) {
      const run = await runDatalyst(['analyze', ws, ...flags]);
      expect(run.exitCode, flags.join(' ')).toBe(2);
      expect(run.stderr, flags.join(' ')).toContain(message);
    }
  });

  it('names unreadable files as skipped and goes on with the others', async () => {
    const ws = await workspace();
    await chmod(ws, 0o755);
    await chmod(path.join(ws, 'sales.csv'), 0o644);
    await writeFile(path.join(ws, 'secret.csv'), 'a\n1\n');
    await chmod(path.join(ws, 'secret.csv'), 0o000);
    // root reads every file: run the real command as an unprivileged user then.
    const asRoot = process.getuid?.() === 0;
    const child = spawnSync(process.execPath, [path.resolve('bin/datalyst.js'), 'analyze', ws, '--offline'], {
      env: { PATH: process.env['PATH'] ?? '', NO_COLOR: '1', DOCKER_HOST: 'unix:///nonexistent/docker.sock' },
      cwd: os.tmpdir(),
      encoding: 'utf8',
      ...(asRoot ? { uid: 65534, gid: 65534 } : {}),
    });
    expect(child.stdout).toContain('! secret.csv: unreadable (EACCES); skipped');
    // Past the workspace check: the run stops only at the (deliberately absent) engine.
    expect(child.status, child.stderr).toBe(4);
  });

  it('writes a cli-error line with --json', async () => {
    const run = await runDatalyst(['analyze', '/no/such/folder', '--json']);
    expect(run.exitCode).toBe(2);
    expect(JSON.parse(run.stdout)).toMatchObject({
      type: 'cli-error',
      exitCode: 2,
      error: { code: 'WORKSPACE_INVALID' },
    });
  });
});

describe('datalyst analyze (runs)', () => {
  async function analyze(
    script: readonly ScriptEntry[],
    flags: string[] = [],
    options: CliHarnessOptions & { models?: string[]; cell?: Parameters<typeof createFakeSandbox>[0] } = {},
  ) {
    const fake = await server(script, options.models);
    const ws = await workspace();
    const out = path.join(await temporaryDir(), 'run');
    const sandbox = createFakeSandbox(options.cell ?? { run: () => printed('30\n') });
    const run = await runDatalyst(
      [
        'analyze',
        ws,
        'What is the total revenue?',
        '--model',
        'fake-model',
        '--base-url',
        fake.baseUrl,
        '--out',
        out,
        ...flags,
      ],
      {
        createSandbox: sandbox.factory,
        ...options,
      },
    );
    return { run, out, fake, sandbox };
  }

  it('runs to an answer, writes every report format and exits 0', async () => {
    const { run, out, fake, sandbox } = await analyze([
      { type: 'text', text: analysisReply },
      { type: 'text', text: answerReply },
    ]);
    expect(run.stderr).toBe('');
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain('Model fake-model at http://127.0.0.1');
    expect(run.stdout).toContain('analyze   | Sum the revenue.');
    expect(run.stdout).toContain('  ✓ E1 ok');
    expect(run.stdout).toContain('answer    | The total revenue is 30.');
    expect(run.stdout).toContain('✓ Answered in 2 rounds');
    expect(run.stdout).toContain('Numbers in the answer: 1 of 1 found in the execution outputs.');
    expect(run.stdout).toContain(`Report: ${path.join(out, 'report.html')}`);
    for (const file of ['report.html', 'report.md', 'analysis.ipynb', 'trace.json', 'trace.jsonl']) {
      expect(await exists(path.join(out, file)), file).toBe(true);
    }
    expect(fake.completionRequests[0]?.body?.model).toBe('fake-model');
    expect(sandbox.sessions[0]?.closed).toBe(true);
    // The CLI's limits reach the sandbox.
    expect(sandbox.sessions[0]?.openedWith.limits).toMatchObject({
      cellTimeoutMs: 120_000,
      memoryMb: 2048,
      cpus: 1.5,
    });
  });

  it('prints only the closing lines with --quiet', async () => {
    const { run, out } = await analyze(
      [
        { type: 'text', text: analysisReply },
        { type: 'text', text: answerReply },
      ],
      ['--quiet'],
    );
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toBe(
      `✓ Answered in 2 rounds · ${/in 2 rounds · (.*)\n/.exec(run.stdout)?.[1] ?? ''}\nReport: ${path.join(out, 'report.html')}\n`,
    );
  });

  it('says that the offline analyst runs when no model is configured', async () => {
    const ws = await workspace();
    const run = await runDatalyst(['analyze', ws, '--out', path.join(await temporaryDir(), 'run')], {
      env: { OPENAI_API_KEY: 'sk-test' },
      prepareSandbox: () => Promise.reject(new Error('stop here')),
    });
    expect(run.stdout).toContain('No model configured: using the built-in offline analyst');
    expect(run.stdout).toContain(
      '! The environment sets an API key but names no model; pass --model or set DATALYST_MODEL to use it.',
    );
    // A plain Error from below is a bug: exit 1 with the stack.
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain('✗ INTERNAL stop here');
  });

  it('talks to DeepAnalyze-8B in its own protocol: no system prompt, results as role execute', async () => {
    const { run, fake } = await analyze(
      [
        { type: 'text', text: analysisReply },
        { type: 'text', text: answerReply },
      ],
      ['--profile', 'deepanalyze'],
    );
    expect(run.exitCode).toBe(0);
    const [first, second] = fake.completionRequests;
    expect(first?.body?.messages?.[0]?.role).toBe('user');
    expect(first?.body?.messages?.[0]?.content).toMatch(
      /^# Instruction\nWhat is the total revenue\?\n\n# Data\n/,
    );
    expect(first?.body?.['add_generation_prompt']).toBe(false);
    expect(second?.body?.messages?.map((message) => message.role)).toEqual(['user', 'assistant', 'execute']);
  });

  it('writes only the formats asked for', async () => {
    const { run, out } = await analyze(
      [{ type: 'text', text: answerReply }],
      ['--format', 'html', '--format', 'ipynb'],
    );
    expect(run.exitCode).toBe(0);
    // trace.json is the trace writer's own (the record of the run), whatever the formats.
    const files = (await readdir(out)).filter((name) => name !== 'artifacts').sort();
    expect(files).toEqual(['analysis.ipynb', 'report.html', 'trace.json', 'trace.jsonl']);
  });

  it('exits 3 when the run stops without an answer, and still writes the report', async () => {
    const { run, out } = await analyze(
      [
        { type: 'text', text: analysisReply },
        { type: 'text', text: analysisReply },
      ],
      ['--max-rounds', '2'],
    );
    expect(run.exitCode).toBe(3);
    expect(run.stdout).toContain('✗ Stopped without an answer (max-rounds)');
    expect(await exists(path.join(out, 'report.html'))).toBe(true);
  });

  it('exits 5 before the sandbox starts when the endpoint does not serve the model', async () => {
    let prepared = false;
    const { run, out, sandbox } = await analyze([{ type: 'text', text: answerReply }], [], {
      models: ['another-model'],
      prepareSandbox: () => {
        prepared = true;
        return Promise.resolve(undefined);
      },
    });
    expect(run.exitCode).toBe(5);
    expect(run.stderr).toContain('✗ MODEL_UNAVAILABLE');
    expect(run.stderr).toMatch(/does not serve "fake-model"; it serves another-model/);
    expect(prepared).toBe(false);
    expect(sandbox.sessions).toHaveLength(0);
    expect(await exists(out)).toBe(false);
  });

  it('exits 5 at once with the real cause when nothing listens at the endpoint (ECONNREFUSED)', async () => {
    const closed = await startFakeOpenAIServer({ script: [] });
    const baseUrl = closed.baseUrl;
    await closed.close();
    const port = new URL(baseUrl).port;
    const ws = await workspace();
    const out = path.join(await temporaryDir(), 'run');
    const run = await runDatalyst([
      'analyze',
      ws,
      '--model',
      'm',
      '--base-url',
      baseUrl,
      '--out',
      out,
      '--json',
    ]);
    expect(run.exitCode).toBe(5);
    expect(run.stderr).toContain(`ECONNREFUSED 127.0.0.1:${port}`);
    expect(run.stderr).not.toContain('Connection error.');
    const lines = run.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string });
    expect(lines.at(-1)).toMatchObject({
      type: 'cli-error',
      exitCode: 5,
      error: { code: 'MODEL_UNAVAILABLE' },
    });
    expect(await exists(out)).toBe(false);
  });

  it("exits 5 without a request when OpenAI's API is meant and no key is set", async () => {
    const ws = await workspace();
    const out = path.join(await temporaryDir(), 'run');
    const run = await runDatalyst(['analyze', ws, '--model', 'gpt-4o-mini', '--out', out]);
    expect(run.exitCode).toBe(5);
    expect(run.stderr).toContain('https://api.openai.com/v1 needs an API key and none is set.');
    expect(run.stderr).toContain('OPENAI_API_KEY');
    expect(await exists(out)).toBe(false);
  });

  it('exits 2 before a run folder exists when the pre-flight refuses the limits', async () => {
    const { ConfigError } = await import('../../src/index.ts');
    const asked: unknown[] = [];
    const { run, out } = await analyze(
      [{ type: 'text', text: answerReply }],
      ['--cpus', '3', '--memory', '1g'],
      {
        prepareSandbox: (request) => {
          asked.push(request.limits);
          return Promise.reject(
            new ConfigError('The sandbox asks for 3 CPUs; the Docker engine has 2.', 'Ask for 2.'),
          );
        },
      },
    );
    expect(asked).toEqual([{ cpus: 3, memoryMb: 1024 }]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('✗ CONFIG_INVALID');
    expect(await exists(out)).toBe(false);
  });

  it('says what the pre-flight found and that the sandbox is starting, before the first round', async () => {
    const { run } = await analyze(
      [
        { type: 'text', text: analysisReply },
        { type: 'text', text: answerReply },
      ],
      [],
      {
        prepareSandbox: ({ onProgress }) => {
          onProgress('Docker engine answers: 2 CPUs, 23.4 GB of memory.');
          return Promise.resolve(undefined);
        },
      },
    );
    expect(run.exitCode).toBe(0);
    const order = [
      'Model endpoint: http://127.0.0.1:',
      'Docker engine answers: 2 CPUs',
      'Starting the sandbox and profiling the workspace…',
      '[round 1/30]',
    ].map((text) => run.stdout.indexOf(text));
    expect(order.every((index) => index >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });

  it('exits 4 when the sandbox pre-flight finds no engine, before a run folder exists', async () => {
    const { SandboxUnavailableError } = await import('../../src/index.ts');
    const { run, out } = await analyze([{ type: 'text', text: answerReply }], [], {
      prepareSandbox: () =>
        Promise.reject(
          new SandboxUnavailableError('The Docker engine at the default socket cannot be reached (ENOENT).', {
            fix: 'Start Docker.',
          }),
        ),
    });
    expect(run.exitCode).toBe(4);
    expect(run.stderr).toContain('✗ SANDBOX_UNAVAILABLE');
    expect(run.stderr).toContain('fix: Start Docker.');
    expect(await exists(out)).toBe(false);
  });

  it('writes only JSON lines on stdout with --json, ending in report-end', async () => {
    const { run, out } = await analyze(
      [
        { type: 'text', text: analysisReply },
        { type: 'text', text: answerReply },
      ],
      ['--json'],
    );
    expect(run.exitCode).toBe(0);
    const lines = run.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string });
    const types = lines.map((line) => line.type);
    // Every line as the shipped schema describes it: time (ISO 8601), schemaVersion, its own fields.
    const validate = shippedSchemaValidator('json-lines.schema.json');
    for (const line of lines) {
      expect(validate(line), JSON.stringify(line).slice(0, 200)).toEqual([]);
      expect(line).toMatchObject({ time: new Date(2025, 2, 14, 9, 30, 15).toISOString(), schemaVersion: 1 });
    }
    expect(types[0]).toBe('workspace-check');
    expect(types).toContain('run-start');
    expect(types).toContain('execution-end');
    expect(types.at(-2)).toBe('run-end');
    expect(lines.at(-1)).toMatchObject({ type: 'report-end', outDir: out });
    // The people-facing closing line goes to stderr, off the JSON stream.
    expect(run.stderr).toContain('Report:');
  });

  it('on Ctrl-C stops the cell, writes the partial trace and a report marked cancelled, and exits 130', async () => {
    const signals = new EventEmitter();
    const { run, out, sandbox } = await analyze(
      [
        { type: 'text', text: analysisReply },
        { type: 'text', text: answerReply },
      ],
      [],
      {
        signals,
        cell: { run: (_code, _index, signal) => slowCell(60_000, signal) },
        onStdout: (text) => {
          if (text.includes('E1 running')) setTimeout(() => signals.emit('SIGINT', 'SIGINT'), 50);
        },
      },
    );
    expect(run.exitCode).toBe(130);
    expect(run.exitedWith).toBeNull();
    expect(run.stdout).toContain('Cancelling');
    expect(run.stdout).toContain('■ Cancelled');
    expect(sandbox.sessions[0]?.closed).toBe(true);
    expect((await traceOf(out)).at(-1)).toMatchObject({
      type: 'run-end',
      termination: { reason: 'cancelled' },
    });
    const html = await readFile(path.join(out, 'report.html'), 'utf8');
    expect(html.toLowerCase()).toContain('cancelled');
    expect(signals.listenerCount('SIGINT')).toBe(0);
  });

  it('exits 130 when Ctrl-C stops the sandbox pre-flight (an image build)', async () => {
    const signals = new EventEmitter();
    const { run, out } = await analyze([{ type: 'text', text: answerReply }], [], {
      signals,
      prepareSandbox: ({ signal }) =>
        new Promise((_, reject) => {
          signal.addEventListener('abort', () =>
            reject(new DOMException('The operation was aborted.', 'AbortError')),
          );
          setTimeout(() => signals.emit('SIGINT', 'SIGINT'), 20);
        }),
    });
    expect(run.exitCode).toBe(130);
    expect(run.stderr).toContain('■ Cancelled before the run started.');
    expect(await exists(out)).toBe(false);
  });

  it('exits at once on a second Ctrl-C', async () => {
    const signals = new EventEmitter();
    let fired = false;
    const { run } = await analyze([{ type: 'text', text: analysisReply }], [], {
      signals,
      // A cell that ignores the first interrupt for a while, like a C extension in a long loop.
      cell: { run: () => new Promise((resolve) => setTimeout(() => resolve(printed('late\n')), 1500)) },
      onStdout: (text) => {
        if (!fired && text.includes('E1 running')) {
          fired = true;
          signals.emit('SIGINT', 'SIGINT');
          signals.emit('SIGINT', 'SIGINT');
        }
      },
    });
    expect(run.exitedWith).toBe(130);
    expect(run.stderr).toContain('Quit without waiting.');
  });
});

describe('datalyst report', () => {
  it('renders a run again into a new folder, and refuses what is not a trace', async () => {
    const fake = await server([{ type: 'text', text: answerReply }]);
    const ws = await workspace();
    const base = await temporaryDir();
    const sandbox = createFakeSandbox({});
    const first = await runDatalyst(
      [
        'analyze',
        ws,
        '--model',
        'fake-model',
        '--base-url',
        fake.baseUrl,
        '--out',
        path.join(base, 'run'),
        '--format',
        'json',
      ],
      {
        createSandbox: sandbox.factory,
      },
    );
    expect(first.exitCode).toBe(0);
    const again = await runDatalyst([
      'report',
      path.join(base, 'run'),
      '--out',
      path.join(base, 'again'),
      '--format',
      'html,md',
    ]);
    expect(again.stderr).toBe('');
    expect(again.exitCode).toBe(0);
    expect(again.stdout).toContain(`Report: ${path.join(base, 'again', 'report.html')}`);
    expect((await readdir(path.join(base, 'again'))).sort()).toEqual(['report.html', 'report.md']);

    const fromFile = await runDatalyst([
      'report',
      path.join(base, 'run', 'trace.jsonl'),
      '--format',
      'ipynb',
    ]);
    expect(fromFile.exitCode).toBe(0);
    expect(await exists(path.join(base, 'run', 'analysis.ipynb'))).toBe(true);

    await writeFile(path.join(base, 'notes.json'), '{"hello": 1}');
    const bad = await runDatalyst(['report', path.join(base, 'notes.json')]);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('TRACE_INVALID');
    const missing = await runDatalyst(['report', path.join(base, 'nothing-here')]);
    expect(missing.exitCode).toBe(2);
  });

  it('renders a trace cut short by a crash and says so', async () => {
    const fake = await server([
      { type: 'text', text: analysisReply },
      { type: 'text', text: answerReply },
    ]);
    const ws = await workspace();
    const base = await temporaryDir();
    const sandbox = createFakeSandbox({ run: () => printed('30\n') });
    await runDatalyst(
      [
        'analyze',
        ws,
        '--model',
        'fake-model',
        '--base-url',
        fake.baseUrl,
        '--out',
        path.join(base, 'run'),
        '--format',
        'json',
      ],
      {
        createSandbox: sandbox.factory,
      },
    );
    const lines = (await readFile(path.join(base, 'run', 'trace.jsonl'), 'utf8')).trimEnd().split('\n');
    await mkdir(path.join(base, 'crashed'));
    // Everything up to the crash, and half of the record being written.
    await writeFile(
      path.join(base, 'crashed', 'trace.jsonl'),
      `${lines.slice(0, -2).join('\n')}\n${(lines.at(-2) ?? '').slice(0, 20)}`,
    );
    const run = await runDatalyst(['report', path.join(base, 'crashed'), '--format', 'html']);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain('The trace has no end');
    expect(run.stdout).toContain('cut off mid-record');
    expect(await exists(path.join(base, 'crashed', 'report.html'))).toBe(true);
  });
});
