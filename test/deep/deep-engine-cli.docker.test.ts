import { readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import Docker from 'dockerode';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { readDeepRecord } from '../../src/deep/index.ts';
import { containerLabels } from '../../src/sandbox/index.ts';
import { startFakeOpenAIServer } from '../support/fake-openai-server.ts';
import { removeTemporaryDirs, temporaryDir } from '../cli/support/cli-harness.ts';
import {
  answerReply,
  codeReply,
  deepScript,
  deepWorkspace,
  evidenceInRequest,
  json,
  roleOf,
  text,
} from './support/scripted-deep-model.ts';

/**
 * The real `datalyst analyze --deep` as a person runs it: a child process,
 * real Docker sessions from the CLI's warm pool, a scripted model over HTTP.
 * Ctrl-C (SIGINT) stops every sub-analysis and leaves no container.
 */

const projectRoot = path.resolve(import.meta.dirname, '../..');
const bin = path.join(projectRoot, 'bin', 'datalyst.js');

afterAll(removeTemporaryDirs);

async function containersOf(pid: number): Promise<number> {
  const containers = await new Docker().listContainers({
    all: true,
    filters: { label: [`${containerLabels.ownerPid}=${pid}`] },
  });
  return containers.length;
}

const cleanEnv = { NO_COLOR: '1', OPENAI_API_KEY: '', DATALYST_API_KEY: '', DATALYST_CONFIG: '' };

describe('datalyst analyze --deep (real process, real sandboxes)', () => {
  it('runs two sub-analyses at once, writes deep.json and sub/, exits 0 and leaves no container', async () => {
    const script = deepScript({
      subQuestions: [
        { question: 'What is the revenue by region?', tables: ['sales.csv'] },
        { question: 'What do the costs add up to?', tables: ['costs.csv'] },
      ],
      subAnalysts: [
        {
          match: 'revenue by region',
          turns: [
            codeReply(
              "import pandas as pd\nprint(pd.read_csv('sales.csv').groupby('region')['revenue'].sum().to_dict())",
            ),
            answerReply('North 2241.0.'),
          ],
          compress: json({ evidence: [{ claim: 'North brought 2,241.', outputs: ['E1'] }] }),
        },
        {
          match: 'costs',
          turns: [
            codeReply("import pandas as pd\nprint(pd.read_csv('costs.csv')['cost'].sum())"),
            answerReply('Costs 4665.5.'),
          ],
          compress: json({ evidence: [{ claim: 'Costs total 4,665.5.', outputs: ['E1'] }] }),
        },
      ],
      plan: (request) =>
        json({
          sections: [
            {
              title: 'Findings',
              purpose: '',
              evidenceIds: evidenceInRequest(request).map((item) => item.id),
            },
          ],
          gaps: [],
        }),
      write: () => text('<Answer>North brought 2,241 [EV1]; costs total 4,665.5 [EV2].</Answer>'),
    });
    const server = await startFakeOpenAIServer({ script: Array.from({ length: 30 }, () => script) });
    const out = path.join(await temporaryDir('datalyst-deep-cli-'), 'deep');
    try {
      const child = execa(
        process.execPath,
        [
          bin,
          'analyze',
          await deepWorkspace(),
          'Report on revenue and costs.',
          '--deep',
          '--concurrency',
          '2',
          '--model',
          'fake-model',
          '--base-url',
          server.baseUrl,
          '--out',
          out,
          '--format',
          'md,pdf',
        ],
        { cwd: projectRoot, env: cleanEnv, reject: false, all: true },
      );
      const run = await child;
      expect(run.exitCode, run.all).toBe(0);
      expect(run.all).toContain('S1 started');
      // The deep report printed by Chromium, and only the formats asked for.
      const { stdout: pdfText } = await execa('pdftotext', [path.join(out, 'report.pdf'), '-']);
      expect(pdfText).toContain('Findings');
      expect(pdfText).toMatch(/North brought 2,241\b/);
      expect(await readdir(out)).not.toContain('report.html');
      expect(await readdir(out)).toContain('report.md');
      expect(run.all).toContain('S2 answered');
      const record = await readDeepRecord(out);
      expect(record?.termination.reason).toBe('answered');
      expect(record?.sections[0]?.numbers.every((number) => number.verified)).toBe(true);
      expect((await readdir(path.join(out, 'sub'))).sort()).toEqual(['S1', 'S2']);
      expect(await containersOf(child.pid ?? -1)).toBe(0);
    } finally {
      await server.close();
    }
  });

  it('Ctrl-C stops every sub-analysis, writes deep.json and a report marked cancelled, exits 130, leaves no container', async () => {
    const script = deepScript({
      subQuestions: [
        { question: 'Sleep over the revenue?', tables: ['sales.csv'] },
        { question: 'Sleep over the costs?', tables: ['costs.csv'] },
      ],
      subAnalysts: [
        { match: 'revenue', turns: [codeReply('import time\ntime.sleep(120)')] },
        { match: 'costs', turns: [codeReply('import time\ntime.sleep(120)')] },
      ],
      plan: () => json({ sections: [{ title: 'x', evidenceIds: [] }], gaps: [] }),
      write: () => answerReply('unused'),
    });
    const server = await startFakeOpenAIServer({ script: Array.from({ length: 10 }, () => script) });
    const out = path.join(await temporaryDir('datalyst-deep-cli-'), 'deep');
    try {
      const child = execa(
        process.execPath,
        [
          bin,
          'analyze',
          await deepWorkspace(),
          'Sleep.',
          '--deep',
          '--concurrency',
          '2',
          '--model',
          'fake-model',
          '--base-url',
          server.baseUrl,
          '--out',
          out,
        ],
        { cwd: projectRoot, env: cleanEnv, reject: false, all: true },
      );
      const subRequests = () =>
        server.completionRequests.filter((request) => roleOf(request) === 'sub-analyst').length;
      for (let waited = 0; subRequests() < 2 && waited < 120_000; waited += 100) await sleep(100);
      await sleep(1500);
      expect(await containersOf(child.pid ?? -1)).toBeGreaterThanOrEqual(2);
      child.kill('SIGINT');
      const run = await child;
      expect(run.exitCode, run.all).toBe(130);
      const record = await readDeepRecord(out);
      expect(record?.termination.reason).toBe('cancelled');
      expect(record?.subAnalyses.map((sub) => sub.outcome)).toEqual(['cancelled', 'cancelled']);
      expect(await containersOf(child.pid ?? -1)).toBe(0);
      // As a person checks: no container with Datalyst's labels is left by this process.
      const { stdout: left } = await execa('docker', [
        'ps',
        '-a',
        '--filter',
        `label=${containerLabels.ownerPid}=${child.pid ?? -1}`,
        '--format',
        '{{.Names}}',
      ]);
      expect(left.trim()).toBe('');

      // Told in order: what is being stopped, then that the run was cancelled.
      const output = run.stdout;
      expect(output.indexOf('Cancelling: stopping every sub-analysis')).toBeGreaterThanOrEqual(0);
      expect(output.indexOf('Cancelling: stopping every sub-analysis')).toBeLessThan(
        output.indexOf('The run was cancelled.'),
      );
      // The cancelled run's report is written, says where it is, and looks cancelled from the title down.
      expect(output).toContain(`Report: ${path.join(out, 'report.html')}`);
      const html = await readFile(path.join(out, 'report.html'), 'utf8');
      expect(html).toMatch(/<title>Cancelled: Sleep\.<\/title>/);
      expect(html).toContain('<span class="title-verdict">Cancelled:</span>');
      expect(html).toMatch(
        /S1 \(1 round\) and S2 \(1 round\) were cancelled before their findings were compressed into evidence/,
      );
      expect(html).not.toContain('The evidence bank is empty.');
      expect(await readFile(path.join(out, 'report.md'), 'utf8')).toMatch(/^# Cancelled: Sleep\./);
    } finally {
      await server.close();
    }
  });

  it('warns of each file that could not be read, and the report lists them with the reason', async () => {
    const workspace = await temporaryDir('datalyst-deep-bad-');
    await writeFile(
      path.join(workspace, 'orders.csv'),
      'order_id,region,amount\n1,north,10.5\n2,south,20\n3,east,7.25\n4,north,12\n',
    );
    await writeFile(path.join(workspace, 'ragged.csv'), 'a,b\n1,2\n3\n4,5,6\n7,8\n');
    await writeFile(path.join(workspace, 'broken.xlsx'), 'this is not a zip file');
    await writeFile(path.join(workspace, 'broken.sqlite'), 'this is not a database either, just text');
    await writeFile(path.join(workspace, 'broken.json'), '{"rows": [1, 2,');
    const out = path.join(await temporaryDir('datalyst-deep-cli-'), 'run-bad');
    const run = await execa(
      process.execPath,
      [bin, 'analyze', workspace, '--deep', '--offline', '--out', out],
      { cwd: projectRoot, env: cleanEnv, reject: false, all: true },
    );
    expect(run.exitCode, run.all).toBe(0);
    for (const name of ['broken.xlsx', 'broken.sqlite', 'broken.json'])
      expect(run.stdout, run.all).toMatch(new RegExp(`! ${name.replace('.', '\\.')}: could not be read \\(`));
    const html = await readFile(path.join(out, 'report.html'), 'utf8');
    const markdown = await readFile(path.join(out, 'report.md'), 'utf8');
    // With the brief, before the sections: the files no sub-analysis saw, and why.
    const listed = html.slice(html.indexOf('id="brief"'), html.indexOf('id="report"'));
    expect(listed).toContain('Files that could not be read');
    for (const name of ['broken.xlsx', 'broken.sqlite', 'broken.json']) {
      expect(listed).toMatch(new RegExp(`<li><span class="mono">${name.replace('.', '\\.')}</span>: \\w+`));
      expect(markdown).toMatch(new RegExp(`^- ${name.replace('.', '\\.')}: \\S`, 'm'));
    }
    expect(markdown.indexOf('### Files that could not be read')).toBeLessThan(
      markdown.indexOf('## Evidence'),
    );
  });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
