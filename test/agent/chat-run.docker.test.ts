import { createHash } from 'node:crypto';
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { analyze } from '../../src/agent/analyze.ts';
import { createOpenAIChatModel } from '../../src/agent/openai-chat-model.ts';
import { readTrace } from '../../src/trace/reader.ts';
import { runnerImageTag } from '../../src/sandbox/index.ts';
import { startFakeOpenAIServer } from '../support/fake-openai-server.ts';
import { cleanUpHarness, makeWorkspace } from './support/loop-harness.ts';

const code = (body: string) => ({
  type: 'text' as const,
  text: `<Analyze>Next.</Analyze>\n<Code>\n\`\`\`python\n${body}\n\`\`\`\n</Code>`,
});

it('a chat-profile run through the real sandbox: an error fed back, a figure and a file produced, the answer', async () => {
  const server = await startFakeOpenAIServer({
    script: [
      code("import pandas as pd\nsales = pd.read_csv('missing.csv')"),
      code(
        [
          'import pandas as pd',
          'import matplotlib.pyplot as plt',
          "sales = pd.read_csv('sales.csv')",
          "totals = sales.groupby('region')['revenue'].sum()",
          'print(totals.to_string())',
          "totals.plot(kind='bar')",
          "totals.to_csv('totals.csv')",
        ].join('\n'),
      ),
      { type: 'text', text: '<Answer>South sells more: 20 against 10.</Answer>' },
    ],
  });
  const runsDir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-chat-run-'));
  try {
    const result = await analyze({
      instruction: 'Which region sells more?',
      workspaceDir: await makeWorkspace(),
      model: createOpenAIChatModel({ baseUrl: server.baseUrl, model: 'gpt-test' }),
      profile: 'chat',
      outDir: path.join(runsDir, 'run'),
    });
    expect(result.termination).toEqual({ reason: 'answered', detail: expect.any(String) });
    expect(result.answer).toBe('South sells more: 20 against 10.');

    const { records } = await readTrace(result.tracePath);
    // The image the session started from, as the session says.
    const start = records[0]?.type === 'run-start' ? records[0] : null;
    expect(start?.environment).toMatchObject({
      sandboxBackend: 'docker',
      image: process.env.DATALYST_IMAGE ?? (await runnerImageTag()),
    });
    const executions = records.flatMap((record) => (record.type === 'execution' ? [record] : []));
    expect(executions.map((execution) => execution.result.status)).toEqual(['error', 'ok']);
    expect(executions[0]?.executeText).toContain('[Error]:');
    expect(executions[0]?.executeText).toContain('FileNotFoundError');
    expect(executions[1]?.executeText).toMatch(/north\s+10\nsouth\s+20/);
    expect(executions[1]?.executeText).toContain('1 figure captured');
    expect(executions[1]?.executeText).toContain('totals.csv (created');

    // The error went back to the model inside <Execute>, as a user message.
    const second = server.completionRequests[1]?.body?.messages ?? [];
    expect(second.at(-1)?.role).toBe('user');
    expect(second.at(-1)?.content).toMatch(/^<Execute>\n[\s\S]*FileNotFoundError[\s\S]*\n<\/Execute>$/);

    const artifact = records.find((record) => record.type === 'artifact');
    expect(artifact).toMatchObject({ outputId: 'E2', path: 'totals.csv' });
    const bytes = await readFile(path.join(result.outDir, 'artifacts', 'totals.csv'));
    expect(bytes.toString()).toBe('region,revenue\nnorth,10\nsouth,20\n');
    expect(artifact?.type === 'artifact' ? artifact.sha256 : '').toBe(
      createHash('sha256').update(bytes).digest('hex'),
    );
  } finally {
    await server.close();
    await rm(runsDir, { recursive: true, force: true });
    await cleanUpHarness();
  }
});
