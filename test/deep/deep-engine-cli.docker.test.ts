import { readdir } from 'node:fs/promises';
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

  it('Ctrl-C stops every sub-analysis, writes deep.json as cancelled, exits 130, leaves no container', async () => {
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
    } finally {
      await server.close();
    }
  });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
