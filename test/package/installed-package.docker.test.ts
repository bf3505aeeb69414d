import { cp, mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeTemporaryDirs, temporaryDir } from '../cli/support/cli-harness.ts';
import { validatorFor } from '../support/json-schema-validator.ts';
import { writeConsumerProject } from './support/consumer-project.ts';

/**
 * Datalyst as a user of the published package gets it: `npm pack`, the
 * tarball installed into a new project (offline, from npm's cache, which holds
 * the dependencies since this clone was installed), then used from outside
 * with nothing of this clone on the paths: a plain `node` ESM script, a strict
 * TypeScript consumer under two module resolutions (declarations checked:
 * skipLibCheck false), the README's examples compiled and run, and the
 * installed `datalyst` binary. Packed and installed once for all of them.
 */

const projectRoot = path.resolve(import.meta.dirname, '../..');
const salesWorkspace = path.join(projectRoot, 'workspace-examples', 'sales');
const typescriptCompiler = path.join(projectRoot, 'node_modules', 'typescript', 'bin', 'tsc');
const cleanEnv = {
  NO_COLOR: '1',
  DATALYST_MODEL: '',
  DATALYST_BASE_URL: '',
  OPENAI_BASE_URL: '',
  OPENAI_API_KEY: '',
  DATALYST_API_KEY: '',
  DATALYST_CONFIG: '',
};

let consumerDir = '';
let tarballFiles: string[] = [];

const run = (file: string, args: readonly string[], options: { cwd?: string } = {}) =>
  execa(file, args, {
    cwd: options.cwd ?? consumerDir,
    env: cleanEnv,
    reject: false,
    all: true,
  });

beforeAll(async () => {
  const packDir = await temporaryDir('datalyst-pack-');
  // `npm pack` runs `prepack`, the build: the tarball holds what `npm publish` would.
  const packed = await execa('npm', ['pack', '--json', '--pack-destination', packDir], {
    cwd: projectRoot,
    env: { npm_config_loglevel: 'error' },
  });
  const [manifest] = JSON.parse(packed.stdout) as [
    { filename: string; integrity: string; files: { path: string }[] },
  ];
  tarballFiles = manifest.files.map((file) => file.path).sort();

  consumerDir = await temporaryDir('datalyst-consumer-');
  await writeConsumerProject({
    projectRoot,
    consumerDir,
    tarballPath: path.join(packDir, manifest.filename),
    tarballIntegrity: manifest.integrity,
  });
  const installed = await execa('npm', ['ci', '--offline', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: consumerDir,
    reject: false,
    all: true,
  });
  if (installed.exitCode !== 0) throw new Error(`npm ci of the tarball failed:\n${installed.all}`);
  await cp(salesWorkspace, path.join(consumerDir, 'data'), { recursive: true });
}, 300_000);

afterAll(removeTemporaryDirs);

describe('the packed tarball', () => {
  it('holds the build, the runner image sources and the schemas, not the sources, tests or fixtures', () => {
    expect(tarballFiles).toContain('dist/index.js');
    expect(tarballFiles).toContain('dist/index.d.ts');
    // The web UI that `datalyst serve` serves at /, built.
    expect(tarballFiles).toContain('web/dist/index.html');
    expect(tarballFiles).toContain('dist/report/chart-worker-bootstrap.mjs');
    expect(tarballFiles).toContain('dist/report/vega-expression-interpreter.js');
    expect(tarballFiles).toContain('docker/python-runner/Dockerfile');
    expect(tarballFiles).toContain('docker/python-runner/kernel/supervisor.py');
    expect(tarballFiles).toContain('bin/datalyst.js');
    expect(tarballFiles.filter((file) => file.startsWith('schemas/')).length).toBeGreaterThan(0);
    const unwanted = tarballFiles.filter((file) =>
      /^(src|test|bench|examples|workspace-examples|scripts|runs)\/|\.test\.|__pycache__|\.pyc$/.test(file),
    );
    expect(unwanted).toEqual([]);
  });

  it('installs without tsx: nothing runs TypeScript at run time', async () => {
    const tsx = await run(process.execPath, ['-e', "import('tsx').then(() => process.exit(1), () => {})"]);
    expect(tsx.exitCode).toBe(0);
  });
});

describe('a plain node ESM script', () => {
  it('imports datalyst and runs an offline analysis in Docker, charts drawn by the compiled workers', async () => {
    const script = `
import { analyze, createOfflineAnalyst, renderRunFolder, DatalystError, VERSION } from 'datalyst';
const result = await analyze({
  instruction: 'Which region drives revenue?',
  workspaceDir: 'data',
  model: createOfflineAnalyst(),
  outDir: 'run',
});
const report = await renderRunFolder(result.outDir, { formats: ['html'] });
console.log(JSON.stringify({ version: VERSION, reason: result.termination.reason, files: report.files, errorClass: typeof DatalystError }));
`;
    await writeFile(path.join(consumerDir, 'plain.mjs'), script);
    const result = await run(process.execPath, ['plain.mjs']);
    expect(result.exitCode, result.all).toBe(0);
    const summary = JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '') as {
      version: string;
      reason: string;
      files: string[];
      errorClass: string;
    };
    const packageJson = JSON.parse(await readFile(path.join(projectRoot, 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(summary).toMatchObject({
      version: packageJson.version,
      reason: 'answered',
      errorClass: 'function',
    });
    const html = await readFile(path.join(consumerDir, 'run', 'report.html'), 'utf8');
    // The chart pool forked dist/report/chart-worker-bootstrap.mjs with the compiled worker.
    expect(html).toContain('<figure class="chart');
    expect(html).not.toContain('chart-failed');
  });
});

describe('a TypeScript consumer (strict, skipLibCheck false)', () => {
  const consumerSource = `
import {
  analyze,
  streamAnalysis,
  createOfflineAnalyst,
  createOpenAIChatModel,
  createSandbox,
  renderRunFolder,
  readTrace,
  DatalystError,
  ModelUnavailableError,
  type AgentEvent,
  type AnalysisResult,
  type CellResult,
  type LanguageModel,
  type SandboxSession,
  type TraceRecord,
  type ConfigFile,
} from 'datalyst';

export function describeEvent(event: AgentEvent): string {
  switch (event.type) {
    case 'text-delta':
      return event.text;
    case 'execution-end':
      return \`\${event.outputId} \${event.result.status}\`;
    case 'run-end':
      return event.result.termination.reason;
    default:
      return event.type;
  }
}

export async function main(signal: AbortSignal): Promise<AnalysisResult> {
  const model: LanguageModel = process.env['URL']
    ? createOpenAIChatModel({ baseUrl: process.env['URL'], model: 'DeepAnalyze-8B' })
    : createOfflineAnalyst();
  for await (const event of streamAnalysis({ instruction: 'x', workspaceDir: 'data', model, signal })) {
    console.log(describeEvent(event));
  }
  const session: SandboxSession = await createSandbox({ workspaceDir: 'data' });
  const cell: CellResult = await session.execute('1 + 1');
  await session.close();
  console.log(cell.status);
  const result = await analyze({ instruction: 'x', workspaceDir: 'data', model });
  await renderRunFolder(result.outDir, { formats: ['html', 'md'] });
  const trace = await readTrace(result.tracePath);
  const records: readonly TraceRecord[] = trace.records;
  console.log(records.length);
  return result;
}

export function explain(error: unknown): string {
  if (error instanceof ModelUnavailableError) return 'model: ' + error.fix;
  if (DatalystError.isInstance(error)) return \`\${error.code} (\${error.fault}): \${error.fix}\`;
  return String(error);
}

export const config: ConfigFile = { maxRounds: 10 };
`;
  const compilerOptions = {
    target: 'ES2022',
    lib: ['ES2023'],
    types: ['node'],
    strict: true,
    skipLibCheck: false,
  };

  // The README's library examples are examples/*.ts with the import named as a user names it.
  const examples = ['analyze.ts', 'stream-analysis.ts', 'sandbox.ts', 'thread.ts'];
  async function writeProject(name: string, moduleOptions: Record<string, string>, withExamples: boolean) {
    const dir = path.join(consumerDir, `ts-${name}`);
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'consumer.ts'), consumerSource);
    if (withExamples) {
      for (const example of examples) {
        const source = await readFile(path.join(projectRoot, 'examples', example), 'utf8');
        await writeFile(path.join(dir, example), source.replaceAll("'../src/index.ts'", "'datalyst'"));
      }
    }
    await writeFile(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          ...compilerOptions,
          ...moduleOptions,
          ...(withExamples ? { outDir: 'out' } : { noEmit: true }),
        },
        files: ['consumer.ts', ...(withExamples ? examples : [])],
      }),
    );
    return dir;
  }

  it("compiles with moduleResolution node16, the README's examples too, and they run under node", async () => {
    const dir = await writeProject('node16', { module: 'Node16', moduleResolution: 'node16' }, true);
    const compiled = await run(process.execPath, [typescriptCompiler, '-p', dir]);
    expect(compiled.all).toBe('');
    expect(compiled.exitCode).toBe(0);
    for (const example of examples) {
      const ran = await run(process.execPath, [
        path.join(dir, 'out', example.replace(/\.ts$/, '.js')),
        'data',
      ]);
      expect(ran.exitCode, `${example}:\n${ran.all}`).toBe(0);
    }
  });

  it('compiles with moduleResolution bundler', async () => {
    const dir = await writeProject('bundler', { module: 'ESNext', moduleResolution: 'bundler' }, false);
    const compiled = await run(process.execPath, [typescriptCompiler, '-p', dir]);
    expect(compiled.all).toBe('');
    expect(compiled.exitCode).toBe(0);
  });
});

describe('the installed datalyst binary', () => {
  it('runs doctor: Docker, the image built from the packaged runner sources, no model', async () => {
    const result = await run(path.join(consumerDir, 'node_modules', '.bin', 'datalyst'), ['doctor']);
    expect(result.exitCode, result.all).toBe(0);
    expect(result.stdout).toMatch(/✓ Docker/);
    expect(result.stdout).toMatch(/✓ Runner image/);
    // --json: one object, as the shipped schema (in the package) describes it.
    const json = await run(path.join(consumerDir, 'node_modules', '.bin', 'datalyst'), ['doctor', '--json']);
    expect(json.exitCode, json.all).toBe(0);
    const report = JSON.parse(json.stdout) as { ok: boolean; checks: { name: string; status: string }[] };
    const schema = JSON.parse(
      await readFile(path.join(consumerDir, 'node_modules/datalyst/schemas/doctor.schema.json'), 'utf8'),
    ) as object;
    expect(validatorFor(schema)(report)).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.checks.find((check) => check.name === 'Docker')?.status).toBe('ok');
  });

  it('answers --version with the package version', async () => {
    const result = await run(path.join(consumerDir, 'node_modules', '.bin', 'datalyst'), ['--version']);
    const packageJson = JSON.parse(await readFile(path.join(projectRoot, 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(result.stdout.trim()).toBe(packageJson.version);
  });

  it('ships no folder this clone has and the package must not need', async () => {
    const installed = await readdir(path.join(consumerDir, 'node_modules', 'datalyst'));
    expect(installed.sort()).toEqual(
      // web: the built UI (web/dist) that `datalyst serve` serves at /.
      ['LICENSE', 'README.md', 'bin', 'dist', 'docker', 'package.json', 'schemas', 'web'].sort(),
    );
  });
});
