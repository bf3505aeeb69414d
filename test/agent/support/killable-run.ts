// A run in its own process, for the test that kills it with SIGKILL mid-run:
// the model is the fake OpenAI server at DATALYST_TEST_BASE_URL, the sandbox a
// fake session whose second cell never ends. Prints `second-cell-running`
// when the trace already holds the first round.
import { streamAnalysis } from '../../../src/agent/analyze.ts';
import { createOpenAIChatModel } from '../../../src/agent/openai-chat-model.ts';
import { createFakeSandbox, printed } from './fake-session.ts';

const baseUrl = process.env.DATALYST_TEST_BASE_URL ?? '';
const outDir = process.env.DATALYST_TEST_OUT_DIR ?? '';
const workspaceDir = process.env.DATALYST_TEST_WORKSPACE ?? '';

const sandbox = createFakeSandbox({
  run: (_code, index) => (index === 0 ? printed('first\n') : new Promise(() => undefined)),
});
for await (const event of streamAnalysis({
  instruction: 'Killed mid-run',
  workspaceDir,
  model: createOpenAIChatModel({ baseUrl, model: 'fake-model' }),
  createSandbox: sandbox.factory,
  outDir,
})) {
  if (event.type === 'execution-start' && event.outputId === 'E2')
    process.stdout.write('second-cell-running\n');
}
