import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createOfflineAnalyst } from '../../src/agent/index.ts';
import { deepAnalyze, readDeepRecord, type DeepEvent } from '../../src/deep/index.ts';
import { renderDeepRunFolder } from '../../src/report/index.ts';
import { useTempDirs } from '../support/temp-dirs.ts';

/**
 * Regression: the deep report's list of files that could not be read came
 * from the sub-analyses' traces only, so a run cancelled before its first
 * sub-analysis named none, though the workspace profile (made before any
 * sub-analysis) had found them. deep.json now records them with the profile.
 */

const tempDirs = useTempDirs();

describe('a deep run cancelled right after the workspace profile', () => {
  it('names the unreadable file in deep.json and in the HTML and Markdown reports', async () => {
    const root = await tempDirs.make('datalyst-deep-cancel-unreadable-');
    const workspaceDir = path.join(root, 'ws');
    await mkdir(workspaceDir);
    await writeFile(path.join(workspaceDir, 'sales.csv'), 'region,revenue\nnorth,1234\nsouth,567\n');
    await writeFile(path.join(workspaceDir, 'broken.xlsx'), 'PK\x03\x04garbage, not a zip');
    const outDir = path.join(root, 'deep');
    const controller = new AbortController();
    const events: DeepEvent['type'][] = [];
    const result = await deepAnalyze({
      instruction: 'Generate a data science report.',
      workspaceDir,
      outDir,
      model: createOfflineAnalyst(),
      concurrency: 1,
      signal: controller.signal,
      onEvent: (event) => {
        events.push(event.type);
        if (event.type === 'profile-end') controller.abort();
      },
    });
    expect(result.termination.reason).toBe('cancelled');
    expect(events).not.toContain('sub-analysis-start');
    const record = await readDeepRecord(outDir);
    expect(record?.subAnalyses.every((sub) => sub.runDir === null)).toBe(true);
    expect(record?.unreadableFiles?.map((file) => file.path)).toEqual(['broken.xlsx']);

    await renderDeepRunFolder(outDir, { formats: ['html', 'md'] });
    const html = await readFile(path.join(outDir, 'report.html'), 'utf8');
    const markdown = await readFile(path.join(outDir, 'report.md'), 'utf8');
    expect(html).toContain('Files that could not be read');
    expect(html).toMatch(/<li><span class="mono">broken\.xlsx<\/span>: /);
    expect(markdown).toContain('### Files that could not be read');
    expect(markdown).toMatch(/^- broken\.xlsx: /m);
    expect(html).not.toMatch(/<span class="mono">sales\.csv<\/span>: /);
  });
});
