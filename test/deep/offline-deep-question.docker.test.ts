import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOfflineAnalyst } from '../../src/agent/index.ts';
import type { DeepRecord } from '../../src/deep/index.ts';
import { deepAnalyze } from '../../src/deep/index.ts';
import { renderDeepRunFolder } from '../../src/report/index.ts';
import { createWarmPool } from '../../src/sandbox/index.ts';
import type { WarmPool } from '../../src/sandbox/index.ts';

/**
 * The offline deep analysis answers the question asked, with real sandboxes.
 * What broke: the time-series example's question (trend, weekly and yearly
 * patterns, the days that do not fit) got a report of correlations and the
 * campaign split, although its sub-analysis printed the trend, the weekday
 * and month pattern and the unusual days; another question got word for word
 * the same sections; a question the data cannot answer (growth since a year
 * it does not hold) got a generic profile under "Answered" with no caveat;
 * "how clean they are" got no section about cleanliness.
 */

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const example = (name: string) => path.join(repoRoot, 'workspace-examples', name);
const trendQuestion =
  'Describe the trend and the weekly and yearly patterns of daily visits, and find the days that do not fit.';
const weekendQuestion = 'Compare weekday and weekend visits and tell me whether traffic is growing';
const salesQuestion =
  'Which region grew fastest between 2023 and 2024, and did any region miss its sales plan?';

interface Run {
  record: DeepRecord;
  html: string;
  markdown: string;
}

let root = '';
let pool: WarmPool;
const runs = new Map<string, Run>();

async function run(name: string, workspace: string, instruction: string): Promise<void> {
  const outDir = path.join(root, name);
  const { record } = await deepAnalyze({
    instruction,
    workspaceDir: example(workspace),
    model: createOfflineAnalyst(),
    outDir,
    maxSubAnalyses: 4,
    concurrency: 2,
    warmPool: pool,
  });
  await renderDeepRunFolder(outDir, { formats: ['html', 'md'], now: new Date(0) });
  runs.set(name, {
    record,
    html: await readFile(path.join(outDir, 'report.html'), 'utf8'),
    markdown: await readFile(path.join(outDir, 'report.md'), 'utf8'),
  });
}

function get(name: string): Run {
  const found = runs.get(name);
  if (found === undefined) throw new Error(`no run ${name}`);
  return found;
}

const titles = (record: DeepRecord) => record.sections.map((section) => section.title);
/** The report's first screen: the header, up to the brief. */
const firstScreen = (html: string) => html.slice(0, html.indexOf('<section id="brief">'));

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'datalyst-deep-question-'));
  pool = createWarmPool({ size: 2 });
  await run('trend', 'time-series', trendQuestion);
  await run('weekend', 'time-series', weekendQuestion);
  await run('sales', 'sales', salesQuestion);
  await run('messy', 'messy', 'Describe what these files contain and how clean they are.');
}, 900_000);

afterAll(async () => {
  await pool?.close();
  await rm(root, { recursive: true, force: true });
});

describe('the offline deep analysis of a question about time', () => {
  it('reports the trend, the weekday and month pattern and the days that do not fit, first', () => {
    const { record, markdown } = get('trend');
    expect(record.termination.reason).toBe('answered');
    expect(titles(record).slice(0, 2)).toEqual(['Over time: trend and patterns', 'Values that stand out']);
    const [time, outliers] = record.sections;
    expect(time?.markdown).toMatch(/weekly mean of daily visits went from [\d.]+ .* \([\d.]+% change\)/);
    expect(time?.markdown).toMatch(/By weekday, the mean visits per day is highest on \w{3}/);
    expect(time?.markdown).toMatch(/By calendar month, the mean visits per day is highest in \w{3}/);
    expect(outliers?.markdown).toMatch(/2023-03-14 stands out/);
    // In the report, and summed up at the top.
    expect(markdown).toMatch(/## Summary[\s\S]*% change\)[\s\S]*## Brief/);
    expect(markdown.indexOf('## Over time: trend and patterns')).toBeLessThan(
      markdown.indexOf('## Evidence'),
    );
  });

  it('gives another question another report', () => {
    const trend = get('trend');
    const weekend = get('weekend');
    expect(titles(weekend.record)).not.toEqual(titles(trend.record));
    expect(titles(weekend.record)[0]).toBe('How the groups compare');
    expect(titles(weekend.record)).toContain('Over time: trend and patterns');
    // The weekday finding answers "compare weekday and weekend" first.
    expect(weekend.record.sections[0]?.markdown).toMatch(/^- By weekday, /m);
    expect(weekend.record.summary?.keyFindings).not.toEqual(trend.record.summary?.keyFindings);
    // Its words no finding says are named, not passed over.
    expect(weekend.record.summary?.cannotAnswer.join(' ')).toContain('“traffic”');
  });
});

describe('a question the data cannot fully answer', () => {
  it('says on the first screen what could not be answered, and does not band it "Answered"', () => {
    const { record, html, markdown } = get('sales');
    expect(record.termination.reason).toBe('answered');
    const cannot = record.summary?.cannotAnswer ?? [];
    expect(cannot.join('\n')).toMatch(/do not cover 2023: .*`order_date` from 2024-01-01 to 2024-12-31/);
    expect(cannot.join('\n')).toContain('neither can growth since 2023');
    const top = firstScreen(html);
    expect(top).toContain('<p class="verdict verdict-incomplete">Partly answered</p>');
    expect(top).toContain('What it could not answer');
    expect(top).toContain('do not cover 2023');
    expect(top).toContain('A question that needs judgement needs a language model');
    expect(top).toContain('Key findings');
    expect(html).toMatch(/<title>Partly answered: /);
    expect(markdown).toMatch(/^# Partly answered: /);
  });
});

describe('a question about how clean the files are', () => {
  it('has a section of the reading notes and missing values, cited as evidence', () => {
    const { record } = get('messy');
    expect(titles(record)[0]).toBe('How clean the data is');
    const clean = record.sections[0]?.markdown ?? '';
    expect(clean).toContain('The file is not UTF-8: it was decoded as cp1252.');
    expect(clean).toMatch(/lines of preamble above the header are skipped/);
    expect(clean).toMatch(/sheets are hidden in the workbook/);
    expect(clean).toMatch(/\(a footer or notes\) are left out/);
    expect(clean).toMatch(/missing values/);
    const evidence = record.evidence.map((item) => item.claim).join('\n');
    expect(evidence).toContain('decoded as cp1252');
  });
});
