import { spawn, execFile } from 'node:child_process';
import { cp, chmod, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { formatFirstMessage } from '../../../src/agent/first-message.ts';
import type { ChatMessage, LanguageModel } from '../../../src/agent/language-model.ts';
import { stripCodeFence } from '../../../src/agent/code-fence.ts';
import { workspaceProfileSchema } from '../../../src/sandbox/workspace-profile.ts';

/**
 * Drives the offline analyst against a real Python in the runner image before
 * the sandbox and the loop exist: one container, one persistent namespace
 * (cell-driver.py), the first message from a naive profile (naive-profile.py),
 * and a loop of turn → cell → Execute text → next turn.
 */

const run = promisify(execFile);
const supportDir = path.dirname(fileURLToPath(import.meta.url));
export const runnerImage = process.env.DATALYST_IMAGE ?? 'datalyst/python-runner:dev';

const driverResultSchema = z.object({
  stdout: z.string(),
  value: z.string().nullable(),
  error: z.object({ name: z.string(), value: z.string(), traceback: z.string() }).nullable(),
  figures: z.number(),
  charts: z.number(),
});
export type DriverResult = z.infer<typeof driverResultSchema>;

export interface DrivenExecution {
  code: string;
  result: DriverResult;
  executeText: string;
}

export interface DrivenRun {
  firstMessage: string;
  turns: string[];
  executions: DrivenExecution[];
  answer: string | null;
  messages: ChatMessage[];
}

function executeTextOf(result: DriverResult): string {
  const parts = [result.stdout.trimEnd()];
  if (result.value !== null) parts.push(result.value);
  if (result.error !== null) parts.push(result.error.traceback.trimEnd());
  if (result.figures > 0) parts.push(`[${result.figures} figure(s) captured]`);
  if (result.charts > 0) parts.push(`[${result.charts} vega-lite chart(s) captured]`);
  return parts.filter((part) => part.length > 0).join('\n');
}

async function copyWorkspace(workspaceDir: string): Promise<string> {
  const copy = await mkdtemp(path.join(tmpdir(), 'datalyst-offline-'));
  for (const name of await readdir(workspaceDir)) {
    await cp(path.join(workspaceDir, name), path.join(copy, name), { recursive: true });
    await chmod(path.join(copy, name), 0o666);
  }
  await chmod(copy, 0o777);
  return copy;
}

function dockerArgs(name: string, workDir: string, extra: string[]): string[] {
  return [
    'run',
    '--rm',
    '-i',
    '--name',
    name,
    '--network',
    'none',
    '--read-only',
    '--tmpfs',
    '/tmp',
    '--memory',
    '2g',
    '-e',
    'MPLCONFIGDIR=/tmp/matplotlib',
    '-v',
    `${workDir}:/home/analyst/work`,
    '-v',
    `${supportDir}:/opt/driver:ro`,
    ...extra,
  ];
}

export async function profileFirstMessage(workDir: string, instruction: string): Promise<string> {
  const name = `datalyst-offline-profile-${process.pid}-${Date.now()}`;
  const { stdout } = await run(
    'docker',
    [...dockerArgs(name, workDir, []), runnerImage, 'python3', '/opt/driver/naive-profile.py'],
    {
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  return formatFirstMessage(instruction, workspaceProfileSchema.parse(JSON.parse(stdout)));
}

export async function driveOfflineAnalysis(
  model: LanguageModel,
  workspaceDir: string,
  instruction: string,
  options: { maxRounds?: number; figureDir?: string } = {},
): Promise<DrivenRun> {
  const workDir = await copyWorkspace(workspaceDir);
  const name = `datalyst-offline-driver-${process.pid}-${Date.now()}`;
  const figureMount =
    options.figureDir === undefined
      ? []
      : ['-v', `${options.figureDir}:/figures`, '-e', 'FIGURE_DIR=/figures'];
  const child = spawn(
    'docker',
    [...dockerArgs(name, workDir, figureMount), runnerImage, 'python3', '-u', '/opt/driver/cell-driver.py'],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  try {
    const firstMessage = await profileFirstMessage(workDir, instruction);
    const messages: ChatMessage[] = [{ role: 'user', content: firstMessage }];
    const turns: string[] = [];
    const executions: DrivenExecution[] = [];
    for (let round = 0; round < (options.maxRounds ?? 30); round += 1) {
      let text = '';
      for await (const chunk of model.stream({ messages, stop: ['</Code>', '</Answer>'] })) {
        if (chunk.type === 'text-delta') text += chunk.text;
      }
      turns.push(text);
      messages.push({ role: 'assistant', content: text });
      const answer = /<Answer>([\s\S]*?)<\/Answer>/.exec(text);
      if (answer?.[1] !== undefined)
        return { firstMessage, turns, executions, answer: answer[1].trim(), messages };
      const code = stripCodeFence(/<Code>([\s\S]*?)<\/Code>/.exec(text)?.[1] ?? '');
      child.stdin.write(`${JSON.stringify({ code })}\n`);
      const line = await lines.next();
      if (line.done === true) throw new Error('the cell driver exited');
      const result = driverResultSchema.parse(JSON.parse(line.value));
      const executeText = executeTextOf(result);
      executions.push({ code, result, executeText });
      messages.push({ role: 'execute', content: executeText });
    }
    return { firstMessage, turns, executions, answer: null, messages };
  } finally {
    child.stdin.end();
    await run('docker', ['rm', '-f', name]).catch(() => undefined);
    await rm(workDir, { recursive: true, force: true });
  }
}
