// A conversation: two questions against the same kernel, the report after each, then a
// resume in a fresh sandbox (the recorded cells are replayed first).
// Run: npx tsx examples/thread.ts workspace-examples/sales
import { createOfflineAnalyst, openThread, renderRunFolder, resumeThread } from '../src/index.ts';

const workspaceDir = process.argv[2] ?? 'workspace-examples/sales';
const model = createOfflineAnalyst();

const thread = await openThread({ workspaceDir, model, idleTimeoutMs: 10 * 60_000 });
const turn = thread.ask('Generate a data science report.');
for await (const event of turn) {
  if (event.type === 'execution-output') process.stdout.write(event.text); // a running cell's output, live
}
const first = await turn.result; // { turn: 1, answer, termination: { reason: 'answered', … }, outputIds, … }
const second = await thread.ask('Break down revenue by region.', { signal: AbortSignal.timeout(600_000) })
  .result;
console.log(first.termination.reason, second.termination.reason, second.outputIds.join(' '));
await renderRunFolder(thread.outDir); // after any turn
await thread.close(); // run-end, trace.json; the sandbox is removed

// Later, in another process: the recorded cells are replayed in a fresh sandbox first.
const resumed = await resumeThread(thread.outDir, { model });
console.log((await resumed.ask('And by month?').result).termination.reason);
await resumed.close();
