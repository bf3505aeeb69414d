// One analysis, then its report. With DATALYST_BASE_URL and DATALYST_MODEL set
// it asks that endpoint's model; otherwise the built-in offline analyst runs.
// Run: npx tsx examples/analyze.ts workspace-examples/sales
import { analyze, createOfflineAnalyst, createOpenAIChatModel, renderRunFolder } from '../src/index.ts';

const workspaceDir = process.argv[2] ?? 'workspace-examples/sales';
const baseUrl = process.env['DATALYST_BASE_URL'];
const model = baseUrl
  ? createOpenAIChatModel({ baseUrl, model: process.env['DATALYST_MODEL'] ?? 'DeepAnalyze-8B' })
  : createOfflineAnalyst();

const result = await analyze({
  instruction: 'Generate a data science report.',
  workspaceDir,
  model,
  profile: 'deepanalyze',
});
const report = await renderRunFolder(result.outDir); // report.html, report.md, analysis.ipynb, trace.json
console.log(result.termination.reason, report.files.join(' '));
