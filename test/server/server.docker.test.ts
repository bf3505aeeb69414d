import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import OpenAI, { toFile } from 'openai';
import { beforeAll, describe, expect, it } from 'vitest';
import { type DatalystServer, type Turn } from '../../src/server/index.ts';
import { useDockerServers } from './support/docker-servers.ts';
import {
  answerReply as answer,
  codeReply as code,
  type ScriptedDockerServer,
} from './support/server-harness.ts';

const ordersCsv = path.resolve('workspace-examples/sales/orders.csv');

async function collectStream(
  stream: AsyncIterable<unknown>,
): Promise<{ text: string; last: Record<string, unknown> }> {
  let text = '';
  let last: Record<string, unknown> = {};
  for await (const chunk of stream as AsyncIterable<{ choices: { delta: { content?: string } }[] }>) {
    text += chunk.choices[0]?.delta.content ?? '';
    last = chunk as unknown as Record<string, unknown>;
  }
  return { text, last };
}

const finalDelta = (last: Record<string, unknown>) =>
  (last.choices as { delta: { thread_id: string; files: { name: string; url: string }[] } }[])[0]?.delta;

describe('datalyst serve on the real sandbox, called with the openai client', () => {
  const servers = useDockerServers('datalyst-serve-docker-');
  let offline: DatalystServer;
  let scripted: ScriptedDockerServer;
  beforeAll(() => {
    offline = servers.offline();
    scripted = servers.scripted();
  });

  it('offline analyst: uploads a CSV, streams the analysis with its <Execute> output, and serves the report', async () => {
    const client = new OpenAI({ baseURL: `${offline.url}/v1`, apiKey: 'none', maxRetries: 0 });
    const file = await client.files.create({
      file: await toFile(await readFile(ordersCsv), 'orders.csv'),
      purpose: 'assistants',
    });
    const stream = await client.chat.completions.create({
      model: 'DeepAnalyze-8B',
      stream: true,
      messages: [{ role: 'user', content: 'Which region drives revenue?', file_ids: [file.id] } as never],
    });
    const { text, last } = await collectStream(stream);
    expect(text).toMatch(/^<Analyze>/);
    expect(text).toContain('</Code>\n<Execute>\n```\n');
    expect(text).toContain('orders.csv');
    expect(text).toMatch(/<Answer>[\s\S]+<\/Answer>$/);
    const delta = finalDelta(last);
    expect(delta?.thread_id).toMatch(/^thread-/);
    const report = delta?.files.find((entry) => entry.name === 'report-turn-1.html');
    const html = await fetch(report?.url ?? '');
    expect(html.status).toBe(200);
    expect(await html.text()).toContain('offline analyst');
  });

  it('scripted model: a written file downloaded from the final chunk URL; a follow-up with thread_id uses the first turn variable', async () => {
    scripted.model.enqueue(
      code(
        [
          'import pandas as pd',
          "orders = pd.read_csv('orders.csv')",
          'rows = len(orders)',
          "orders.head(3).to_csv('first_rows.csv', index=False)",
          'print(rows)',
        ].join('\n'),
      ),
      answer('Done.'),
    );
    const client = new OpenAI({ baseURL: `${scripted.url}/v1`, apiKey: 'none', maxRetries: 0 });
    const file = await client.files.create({
      file: await toFile(await readFile(ordersCsv), 'orders.csv'),
      purpose: 'assistants',
    });
    const stream = await client.chat.completions.create({
      model: 'gpt-test',
      stream: true,
      messages: [{ role: 'user', content: 'Save the first rows.', file_ids: [file.id] } as never],
    });
    const { text, last } = await collectStream(stream);
    const rows = (await readFile(ordersCsv, 'utf8')).trim().split('\n').length - 1;
    expect(text).toContain(`<Execute>\n\`\`\`\n${rows}\n`);
    const delta = finalDelta(last);
    const written = delta?.files.find((entry) => entry.name === 'first_rows.csv');
    expect(written).toBeDefined();
    const download = await fetch(written?.url ?? '');
    expect(download.status).toBe(200);
    const expected = (await readFile(ordersCsv, 'utf8')).split('\n').slice(0, 1)[0];
    expect((await download.text()).split('\n')[0]).toBe(expected);
    const turn = (await (
      await fetch(`${scripted.url}/v1/threads/${delta?.thread_id}/turns/1`)
    ).json()) as Turn;
    expect(turn).toMatchObject({ status: 'finished', termination: { reason: 'answered' } });
  });

  it("runs the README's client example (examples/server-client.ts) against the server unchanged", async () => {
    const { stdout } = await execa('npx', ['tsx', 'examples/server-client.ts', ordersCsv], {
      env: { DATALYST_SERVER_URL: offline.url },
      timeout: 300_000,
    });
    expect(stdout).toContain('<Answer>');
    expect(stdout).toContain('<Execute>');
    expect(stdout).toMatch(/\nthread \S+: [1-9]\d* characters in the follow-up/);
  });
});
