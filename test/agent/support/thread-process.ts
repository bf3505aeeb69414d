// A thread in its own process, for the test that kills it with SIGKILL: the
// model is the fake OpenAI server at DATALYST_TEST_BASE_URL, the sandbox the
// real one. Asks two questions, prints `two-turns-done`, then waits to be killed.
import { createOpenAIChatModel } from '../../../src/agent/openai-chat-model.ts';
import { openThread } from '../../../src/agent/thread/index.ts';

const thread = await openThread({
  workspaceDir: process.env.DATALYST_TEST_WORKSPACE ?? '',
  outDir: process.env.DATALYST_TEST_OUT_DIR ?? '',
  model: createOpenAIChatModel({ baseUrl: process.env.DATALYST_TEST_BASE_URL ?? '', model: 'fake-model' }),
});
for (const question of ['Load the sales.', 'Take a timestamp.']) {
  const result = await thread.ask(question).result;
  process.stdout.write(`turn ${result.turn}: ${result.termination.reason}\n`);
}
process.stdout.write('two-turns-done\n');
await new Promise(() => undefined);
