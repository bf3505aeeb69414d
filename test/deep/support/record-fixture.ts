// npx tsx test/deep/support/record-fixture.ts — records test/fixtures/deep/student-loan again:
// an offline deep run of workspace-examples/student-loan with Docker (4 sub-analyses),
// each sub-run's trace kept with its figures shrunk to a 1×1 PNG (trim-sub-trace.ts).
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readTrace } from '../../../src/trace/index.ts';
import { createOfflineAnalyst } from '../../../src/agent/index.ts';
import { deepAnalyze } from '../../../src/deep/index.ts';
import { recordedSubRunsDir } from './recorded-deep-run.ts';
import { trimSubTrace } from './trim-sub-trace.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const outDir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-deep-fixture-'));
try {
  const { record } = await deepAnalyze({
    workspaceDir: path.join(repoRoot, 'workspace-examples', 'student-loan'),
    instruction: 'Generate a data science report.',
    model: createOfflineAnalyst(),
    outDir,
    maxSubAnalyses: 4,
  });
  for (const sub of record.subAnalyses) {
    const { records } = await readTrace(path.join(outDir, sub.runDir ?? '', 'trace.jsonl'));
    await mkdir(path.join(recordedSubRunsDir, sub.id), { recursive: true });
    const lines = trimSubTrace(records).map((entry) => JSON.stringify(entry));
    await writeFile(path.join(recordedSubRunsDir, sub.id, 'trace.jsonl'), `${lines.join('\n')}\n`);
  }
} finally {
  await rm(outDir, { recursive: true, force: true });
}
