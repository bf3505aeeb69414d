// The library's streaming API: run an analysis, print what happens, render the report.
// Run: npx tsx examples/stream-analysis.ts workspace-examples/sales
// With a model: DATALYST_BASE_URL=http://localhost:8000/v1 DATALYST_MODEL=DeepAnalyze-8B npx tsx examples/stream-analysis.ts data/
import {
  createOfflineAnalyst,
  createOpenAIChatModel,
  renderRunFolder,
  streamAnalysis,
  type LanguageModel,
} from '../src/index.ts';

const workspaceDir = process.argv[2] ?? 'workspace-examples/sales';
const baseUrl = process.env['DATALYST_BASE_URL'];
const modelName = process.env['DATALYST_MODEL'];
const model: LanguageModel =
  baseUrl && modelName ? createOpenAIChatModel({ baseUrl, model: modelName }) : createOfflineAnalyst();

const controller = new AbortController();
process.once('SIGINT', () => controller.abort());

for await (const event of streamAnalysis({
  instruction: 'Which region and product drive revenue?',
  workspaceDir,
  model,
  profile: modelName?.toLowerCase().includes('deepanalyze') ? 'deepanalyze' : 'chat',
  signal: controller.signal,
})) {
  switch (event.type) {
    case 'round-start':
      console.log(`\n— round ${event.round}`);
      break;
    case 'text-delta':
      process.stdout.write(event.text);
      break;
    case 'execution-end':
      console.log(
        `\n[${event.outputId}] ${event.result.status} in ${Math.round(event.result.durationMs)} ms`,
      );
      break;
    case 'error':
      console.error(`${event.error.code}: ${event.error.message} (${event.error.fix})`);
      break;
    case 'run-end': {
      const report = await renderRunFolder(event.result.outDir);
      const html = report.files.find((file) => file.endsWith('report.html'));
      console.log(`\n${event.result.termination.reason}; report: ${html ?? event.result.outDir}`);
      break;
    }
  }
}
