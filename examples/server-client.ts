// `datalyst serve` called with the openai client, as a program written for DeepAnalyze's API calls it:
// upload a file, stream an analysis, follow up in the same kernel with thread_id.
// Run: datalyst serve & npx tsx examples/server-client.ts workspace-examples/sales/orders.csv
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import OpenAI, { toFile } from 'openai';

const csvPath = process.argv[2] ?? 'workspace-examples/sales/orders.csv';
const baseURL = `${process.env['DATALYST_SERVER_URL'] ?? 'http://127.0.0.1:8200'}/v1`;
const client = new OpenAI({
  baseURL,
  apiKey: process.env['DATALYST_SERVER_API_KEY'] ?? 'unused-on-loopback',
});

const file = await client.files.create({
  file: await toFile(await readFile(csvPath), path.basename(csvPath)),
  purpose: 'assistants',
});
const stream = await client.chat.completions.create({
  model: 'DeepAnalyze-8B', // the server's configured model answers whatever is named here
  stream: true,
  messages: [{ role: 'user', content: 'Which region sells most?', file_ids: [file.id] } as never],
});
let threadId = '';
for await (const chunk of stream) {
  process.stdout.write(chunk.choices[0]?.delta.content ?? ''); // <Analyze>… <Code>… <Execute>… <Answer>…
  const delta = chunk.choices[0]?.delta as { thread_id?: string; files?: { name: string; url: string }[] };
  if (delta.thread_id) threadId = delta.thread_id; // the final chunk: files (download URLs) and thread_id
}
// A follow-up in the same kernel: thread_id on the last message.
const next = await client.chat.completions.create({
  model: 'DeepAnalyze-8B',
  messages: [{ role: 'user', content: 'Break down revenue by region.', thread_id: threadId } as never],
});
console.log(
  `\nthread ${threadId}: ${next.choices[0]?.message.content?.length ?? 0} characters in the follow-up`,
);
