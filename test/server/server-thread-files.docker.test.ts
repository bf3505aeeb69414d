import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import OpenAI, { toFile } from 'openai';
import { beforeAll, describe, expect, it } from 'vitest';
import { noDataFilesLine } from '../../src/agent/first-message.ts';
import { type DatalystServer } from '../../src/server/index.ts';
import { ATTACH_FILES_HINT } from '../../src/server/thread-engine.ts';
import { useDockerServers } from './support/docker-servers.ts';
import {
  answerReply as answer,
  codeReply as code,
  type ScriptedDockerServer,
} from './support/server-harness.ts';

/**
 * Regressions a reviewer found with `datalyst serve` (DeepAnalyze's API, over
 * real HTTP, on the real sandbox): a thread that began without files ended
 * no-data for ever, even once a follow-up attached a file; a file a follow-up
 * attached to a thread with data was ignored without notice. And DeepAnalyze's
 * "Simple Chat (No Files)": with a language model, a question without files
 * goes to the model.
 */

const ordersCsv = path.resolve('workspace-examples/sales/orders.csv');
const personCsv = path.resolve('workspace-examples/student-loan/person.csv');

interface Completion {
  choices: { message: { content: string; thread_id: string } }[];
  termination: { reason: string; detail: string };
}

async function chat(
  url: string,
  content: string,
  extra: { thread_id?: string; file_ids?: string[] } = {},
): Promise<{ content: string; threadId: string; termination: Completion['termination'] }> {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'DeepAnalyze-8B', messages: [{ role: 'user', content, ...extra }] }),
  });
  expect(response.status).toBe(200);
  const completion = (await response.json()) as Completion;
  const message = completion.choices[0]?.message;
  return {
    content: message?.content ?? '',
    threadId: message?.thread_id ?? '',
    termination: completion.termination,
  };
}

async function upload(url: string, file: string): Promise<string> {
  const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'none', maxRetries: 0 });
  const uploaded = await client.files.create({
    file: await toFile(await readFile(file), path.basename(file)),
    purpose: 'assistants',
  });
  return uploaded.id;
}

async function threadFiles(url: string, threadId: string): Promise<string[]> {
  const thread = (await (await fetch(`${url}/v1/threads/${threadId}`)).json()) as {
    files: { filename: string }[];
  };
  return thread.files.map((file) => file.filename);
}

describe('datalyst serve: files attached to a follow-up, and a chat without files', () => {
  const servers = useDockerServers('datalyst-serve-files-');
  let offline: DatalystServer;
  let scripted: ScriptedDockerServer;
  beforeAll(() => {
    offline = servers.offline();
    scripted = servers.scripted();
  });

  it('offline analyst: "Hello" without files ends no-data saying to attach files; the same thread with person.csv attached analyses it', async () => {
    const hello = await chat(offline.url, 'Hello');
    expect(hello.termination.reason).toBe('no-data');
    expect(hello.content).toContain('No answer (no-data): The workspace holds no files');
    expect(hello.content).toContain(ATTACH_FILES_HINT);

    const person = await upload(offline.url, personCsv);
    const described = await chat(offline.url, 'Describe the data', {
      thread_id: hello.threadId,
      file_ids: [person],
    });
    expect(described.threadId).toBe(hello.threadId);
    expect(described.termination.reason).toBe('answered');
    expect(described.content).toContain("pd.read_csv('person.csv')");
    expect(described.content).toMatch(/<Answer>[\s\S]*person\.csv[\s\S]*<\/Answer>$/);
    expect(await threadFiles(offline.url, hello.threadId)).toEqual(['person.csv']);
  });

  it('offline analyst: a follow-up that attaches person.csv to a thread on orders.csv describes both, and the report hashes it', async () => {
    const orders = await upload(offline.url, ordersCsv);
    const first = await chat(offline.url, 'Which region drives revenue?', { file_ids: [orders] });
    expect(first.termination.reason).toBe('answered');
    const person = await upload(offline.url, personCsv);
    const followUp = await chat(offline.url, 'Describe the data', {
      thread_id: first.threadId,
      file_ids: [person],
    });
    expect(followUp.termination.reason).toBe('answered');
    const answerText = /<Answer>([\s\S]*)<\/Answer>$/.exec(followUp.content)?.[1] ?? '';
    expect(answerText).toContain('`person.csv`: 1000 rows × 1 column (`name`), loaded now.');
    expect(answerText).toMatch(/`orders.csv`: 1200 rows × 10 columns, as loaded in this conversation/);
    expect(answerText).toContain('`person.csv`: 1000 rows × 1 column, as loaded in this conversation');
    expect(await threadFiles(offline.url, first.threadId)).toEqual(['orders.csv', 'person.csv']);

    const report = await fetch(`${offline.url}/v1/threads/${first.threadId}/turns/2/report?format=md`);
    expect(report.status).toBe(200);
    const sha256 = createHash('sha256')
      .update(await readFile(personCsv))
      .digest('hex');
    expect(await report.text()).toMatch(
      new RegExp(`\\| person\\.csv \\| [^|]+ \\| added before question 2 \\| \`${sha256}\` \\|`),
    );
  });

  it('language model: "Hello" without files goes to the model (no data files, says the first message); a file attached later is told to it', async () => {
    scripted.model.enqueue(
      answer('Hello! Attach a data file and I will analyse it.'),
      code("import pandas as pd\npeople = pd.read_csv('person.csv')\nprint(len(people))"),
      answer('person.csv lists 1000 people.'),
    );
    const requestsBefore = scripted.model.completionRequests.length;
    const hello = await chat(scripted.url, 'Hello');
    expect(hello.termination.reason).toBe('answered');
    expect(hello.content).toBe('<Answer>Hello! Attach a data file and I will analyse it.</Answer>');
    const first = scripted.model.completionRequests[requestsBefore]?.body?.messages ?? [];
    expect(first.at(-1)?.content).toBe(`# Instruction\nHello\n\n# Data\n${noDataFilesLine}`);

    const person = await upload(scripted.url, personCsv);
    const described = await chat(scripted.url, 'Describe the data', {
      thread_id: hello.threadId,
      file_ids: [person],
    });
    expect(described.termination.reason).toBe('answered');
    expect(described.content).toContain('<Execute>\n```\n1000\n');
    const told = scripted.model.completionRequests[requestsBefore + 1]?.body?.messages?.at(-1)?.content ?? '';
    expect(told).toContain('The workspace changed since the last question: 1 file was added ("person.csv").');
    expect(told).toMatch(/Added file 1: \{"name":"person.csv"/);
    expect(told).toMatch(/Describe the data$/);
  });
});
