import { createHash } from 'node:crypto';
import { cp, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderReport } from '../../src/report/index.ts';
import { createSandbox, runnerImageTag } from '../../src/sandbox/index.ts';
import { cellText, executeInRunner } from '../support/notebook-runner.ts';
import { differenceBeyondTiedModes } from '../support/tied-modes.ts';
import type { CellResult } from '../../src/sandbox/index.ts';
import { readTrace } from '../../src/trace/reader.ts';
import { TRACE_VERSION } from '../../src/trace/schema.ts';
import type { ExecutionRecord, TraceRecord } from '../../src/trace/schema.ts';

/**
 * analysis.ipynb must redo the run: executed top to bottom with nbclient in
 * the runner image, without network, against a copy of the workspace, it
 * prints what the run printed.
 */

const repoRoot = resolve(import.meta.dirname, '../..');
let root = '';

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'datalyst-notebook-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function copyWorkspace(name: string): Promise<string> {
  const workDir = join(root, `${name}-work`);
  await cp(join(repoRoot, 'workspace-examples', name), workDir, {
    recursive: true,
    filter: (source) => !/README\.md$|instruction\.txt$/.test(source),
  });
  return workDir;
}

describe('analysis.ipynb re-executed in the runner image', () => {
  it("reproduces every printed output of DeepAnalyze's recorded student-loan run", async () => {
    const trace = await readTrace(join(repoRoot, 'test/fixtures/traces/student-loan/trace.jsonl'));
    const outDir = join(root, 'student-loan-report');
    await renderReport(trace, { outDir, formats: ['ipynb'] });
    const executed = await executeInRunner(
      await copyWorkspace('student-loan'),
      join(outDir, 'analysis.ipynb'),
    );
    const executions = trace.records.filter(
      (record): record is ExecutionRecord => record.type === 'execution',
    );
    expect(executions).toHaveLength(7);
    for (const execution of executions) {
      // describe()'s `top` of a tied mode depends on the CPU (tied-modes.ts).
      expect(
        differenceBeyondTiedModes(
          cellText(executed, execution.outputId, 'stdout'),
          execution.result.stdout.text.trim(),
          join(repoRoot, 'workspace-examples', 'student-loan'),
        ),
        execution.outputId,
      ).toBeNull();
    }
  });

  it('reproduces a live sandbox run: prints, echoed values, a figure, a chart and an error', async () => {
    const cells = [
      "import pandas as pd\nimport matplotlib.pyplot as plt\norders = pd.read_csv('orders.csv')\nprint(orders.shape)\nprint(round(orders['revenue'].mean(), 4))",
      "orders.groupby('region')['revenue'].sum().round(2)",
      "fig, ax = plt.subplots(figsize=(4, 3))\norders.groupby('region')['units'].sum().plot(kind='bar', ax=ax)\nprint('plotted', len(ax.patches))",
      "import altair as alt\nalt.Chart(orders.head(300)).mark_point().encode(x='unit_price', y='revenue', color='region')",
      "orders['no_such_column'].sum()",
      "print('still here', len(orders))",
    ];
    const workspaceDir = join(repoRoot, 'workspace-examples', 'sales');
    const results: CellResult[] = [];
    const session = await createSandbox({ workspaceDir });
    try {
      for (const code of cells) results.push(await session.execute(code));
    } finally {
      await session.close();
    }
    expect(results.map((result) => result.status)).toEqual(['ok', 'ok', 'ok', 'ok', 'error', 'ok']);
    expect(results[2]?.figures).toHaveLength(1);
    expect(results[3]?.charts).toHaveLength(1);

    const records = await liveTrace(workspaceDir, cells, results);
    const outDir = join(root, 'live-report');
    const rendered = await renderReport(records, { outDir });
    expect(rendered.charts).toEqual({ rendered: 1, failed: 0 });
    expect(rendered.grounding.verified).toBeGreaterThanOrEqual(2);

    const executed = await executeInRunner(await copyWorkspace('sales'), join(outDir, 'analysis.ipynb'));
    results.forEach((result, index) => {
      const outputId = `E${index + 1}`;
      expect(cellText(executed, outputId, 'stdout'), outputId).toBe(result.stdout.text.trim());
      if (result.value !== null)
        expect(cellText(executed, outputId, 'value'), outputId).toBe(result.value.trim());
    });
    const kinds = (outputId: string): string[] => {
      const cell = executed.cells.find((candidate) => candidate.id === outputId);
      return cell?.cell_type === 'code'
        ? cell.outputs.flatMap((output) =>
            'data' in output ? Object.keys(output.data) : [output.output_type],
          )
        : [];
    };
    expect(kinds('E3')).toContain('image/png');
    expect(kinds('E5')).toContain('error');
    // Re-run charts are the vega-lite spec (drawn offline), not HTML that loads vega from a CDN.
    expect(kinds('E4')).toContain('application/vnd.vegalite.v5+json');
    expect(kinds('E4')).not.toContain('text/html');
  });
});

async function liveTrace(
  workspaceDir: string,
  cells: readonly string[],
  results: readonly CellResult[],
): Promise<TraceRecord[]> {
  const names = (await readdir(workspaceDir)).filter(
    (name) => !['README.md', 'instruction.txt'].includes(name),
  );
  const files = await Promise.all(
    names.map(async (path) => {
      const bytes = await readFile(join(workspaceDir, path));
      return { path, sizeBytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
    }),
  );
  const at = new Date('2025-04-01T10:00:00Z').toISOString();
  const shape = results[0]?.stdout.text.split('\n')[0] ?? '';
  const mean = results[0]?.stdout.text.split('\n')[1] ?? '';
  const answer = `The orders table has shape ${shape}; the mean revenue is ${mean}.`;
  const records: TraceRecord[] = [
    {
      type: 'run-start',
      version: TRACE_VERSION,
      runId: 'live-notebook',
      startedAt: at,
      instruction: 'Summarize revenue by region.',
      workspace: { path: workspaceDir, files },
      model: { id: 'test-script', profile: 'chat', baseUrl: null, offline: false },
      limits: {
        maxRounds: 10,
        cellTimeoutMs: 120_000,
        memoryMb: 2048,
        cpus: 1.5,
        deadlineMs: null,
        contextBudgetTokens: 28_000,
      },
      environment: {
        datalystVersion: '0.1.0',
        nodeVersion: process.version,
        sandboxBackend: 'docker',
        image: await runnerImageTag(),
      },
    },
  ];
  cells.forEach((code, index) => {
    const round = index + 1;
    const result = results[index];
    if (!result) return;
    records.push({
      type: 'step',
      round,
      at,
      kind: 'code',
      text: `\`\`\`python\n${code}\n\`\`\``,
      closed: true,
    });
    records.push({
      type: 'execution',
      round,
      at,
      outputId: `E${round}`,
      code,
      result,
      executeText: result.stdout.text,
    });
  });
  records.push({ type: 'step', round: cells.length + 1, at, kind: 'answer', text: answer, closed: true });
  records.push({
    type: 'run-end',
    endedAt: at,
    durationMs: 1000,
    rounds: cells.length + 1,
    usage: { promptTokens: 0, completionTokens: 0 },
    termination: { reason: 'answered', detail: '' },
    answer,
  });
  await writeFile(join(root, 'live-trace.json'), JSON.stringify({ version: TRACE_VERSION, records }));
  return records;
}
