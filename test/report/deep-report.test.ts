import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeepRecord } from '../../src/deep/index.ts';
import { DatalystError } from '../../src/errors/index.ts';
import { renderDeepRunFolder } from '../../src/report/index.ts';
import { hostile } from '../deep/support/hostile-deep-record.ts';
import { buildRecordedDeepRun } from '../deep/support/recorded-deep-run.ts';

/**
 * The deep report on a deep run folder built from four recorded offline
 * sub-runs of student-loan (no Docker): every citation resolves to an anchor
 * that exists, and hostile text in claims, section text, sub-questions and
 * table names goes through inert, as in the single report's safety tests.
 */

interface LiveTag {
  name: string;
  attributes: Array<[string, string]>;
}

function liveTags(document: string): LiveTag[] {
  return Array.from(
    document.matchAll(/<([a-z][a-z0-9-]*)((?:\s+[^\s=>/]+(?:="[^"]*")?)*)\s*\/?>/gi),
    (match) => ({
      name: (match[1] ?? '').toLowerCase(),
      attributes: Array.from(
        (match[2] ?? '').matchAll(/\s+([^\s=>/]+)(?:="([^"]*)")?/g),
        (attribute) => [(attribute[1] ?? '').toLowerCase(), attribute[2] ?? ''] as [string, string],
      ),
    }),
  );
}

let root = '';
let html = '';
let markdown = '';
let hostileHtml = '';
let hostileMarkdown = '';
let record: DeepRecord;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'datalyst-deep-report-'));
  record = await buildRecordedDeepRun(join(root, 'plain'));
  const rendered = await renderDeepRunFolder(join(root, 'plain'), { now: new Date(0) });
  expect(rendered.grounding.unverified).toBe(0);
  html = await readFile(join(root, 'plain', 'report.html'), 'utf8');
  markdown = await readFile(join(root, 'plain', 'report.md'), 'utf8');
  await buildRecordedDeepRun(join(root, 'hostile'), hostile);
  await renderDeepRunFolder(join(root, 'hostile'));
  hostileHtml = await readFile(join(root, 'hostile', 'report.html'), 'utf8');
  hostileMarkdown = await readFile(join(root, 'hostile', 'report.md'), 'utf8');
}, 60_000);
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

function ids(document: string): Set<string> {
  return new Set(Array.from(document.matchAll(/\sid="([^"]+)"/g), (match) => match[1] ?? ''));
}

describe('the deep report of a recorded offline deep run', () => {
  it('has every section, evidence item and sub-analysis, and every in-page link resolves', () => {
    const anchors = ids(html);
    for (const section of record.sections) {
      expect(html).toContain(`id="section-${section.id}"`);
      for (const id of section.citedEvidenceIds)
        expect(html).toContain(`<a href="#evidence-${id}">${id}</a>`);
    }
    for (const item of record.evidence) {
      expect(anchors.has(`evidence-${item.id}`)).toBe(true);
      for (const output of item.outputs) expect(anchors.has(`output-${output.replace(':', '_')}`)).toBe(true);
    }
    for (const sub of record.subAnalyses) expect(anchors.has(`sub-${sub.id}`)).toBe(true);
    const targets = Array.from(html.matchAll(/href="#([^"]+)"/g), (match) => match[1] ?? '');
    expect(targets.length).toBeGreaterThan(100);
    expect(targets.filter((target) => !anchors.has(target))).toEqual([]);
  });

  it('places each cited figure once, with the first section citing it, and links the cell to it', () => {
    const placed = Array.from(
      html.matchAll(/<figure class="(?:figure|chart)" id="(visual-[^"]+)"/g),
      (m) => m[1],
    );
    expect(placed.length).toBeGreaterThan(3);
    expect(new Set(placed).size).toBe(placed.length);
    for (const id of placed) expect(html).toContain(`<a href="#${id}">`);
  });

  it('marks every section number as verified against the outputs of its evidence', () => {
    expect(html).toContain('class="num num-verified"');
    const reportPart = html.slice(html.indexOf('id="report"'), html.indexOf('id="evidence"'));
    expect(reportPart).not.toContain('num-unverified');
  });

  it('writes report.md with the sections, citations linked, evidence anchors and figure assets', () => {
    for (const section of record.sections)
      expect(markdown).toContain(`## ${section.title.replace(/_/g, '\\_')}`);
    expect(markdown).toContain('[EV1](#evidence-EV1)');
    expect(markdown).toContain('<a id="evidence-EV1"></a>');
    expect(markdown).toMatch(/!\[Figure 1 of S\d:E\d+\]\(assets\/S\d_E\d+-figure-1\.png\)/);
    // An answered sub-analysis is "answered", once: its loop's termination says the same.
    expect(markdown).toContain('- Outcome: **answered**; rounds:');
    expect(markdown).not.toContain('(answered)');
  });

  it('says how to get Chromium when the pdf cannot be printed, after writing the other formats', async () => {
    const outDir = join(root, 'no-chromium');
    const failure = await renderDeepRunFolder(join(root, 'plain'), {
      outDir,
      formats: ['md', 'pdf'],
      chromiumPath: join(root, 'no-such-chromium'),
    }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(DatalystError.isInstance(failure)).toBe(true);
    expect((failure as DatalystError).code).toBe('CHROMIUM_UNAVAILABLE');
    expect((failure as DatalystError).fix).toContain('apt-get install chromium');
    expect((await stat(join(outDir, 'report.md'))).size).toBeGreaterThan(0);
    await expect(stat(join(outDir, 'report.pdf'))).rejects.toThrow();
    await expect(stat(join(outDir, 'report.html'))).rejects.toThrow();
  });

  it('marks the brief questions the budget left unresearched, and says near the top how to research them', () => {
    // The recorded run: a brief of 6 questions, a budget of 4 sub-analyses.
    expect(record.brief?.questions.length).toBe(6);
    const items = Array.from(html.matchAll(/<li( class="not-researched")?><span class="brief-question">/g));
    expect(items.map((item) => item[1] !== undefined)).toEqual([false, false, false, false, true, true]);
    expect(html.match(/>not researched</g)?.length).toBe(2);
    const band = /<div class="banner banner-unresearched"[^>]*>(.*?)<\/div>/.exec(html)?.[1] ?? '';
    expect(band).toContain('2 of the brief&#39;s 6 questions were not researched (questions 5 and 6');
    expect(band).toContain('<code>--sub-analyses 6</code>');
    // Near the top: before the brief.
    expect(html.indexOf('banner-unresearched')).toBeLessThan(html.indexOf('id="brief"'));
    expect(markdown).toMatch(/> \*\*2 of the brief's 6 questions were not researched .*`--sub-analyses 6`/);
    const briefLines = markdown.split('\n').filter((line) => /^\d\. /.test(line));
    expect(briefLines.map((line) => line.endsWith('— **not researched**'))).toEqual([
      false,
      false,
      false,
      false,
      true,
      true,
    ]);
  });

  it('shows its times as a person reads them, in UTC, the ISO value kept in <time datetime>', () => {
    expect(html).toContain('<time datetime="1970-01-01T00:00:00.000Z">1 January 1970, 00:00 UTC</time>');
    expect(html).toContain(`<time datetime="${record.startedAt}">`);
    // No recorded time is shown raw: ISO values appear only inside datetime attributes.
    const shownText = html.replace(/<[^>]*>/g, ' ');
    expect(shownText).not.toMatch(/\d{4}-\d\d-\d\dT\d\d:\d\d/);
    expect(markdown).toContain('Rendered at 1 January 1970, 00:00 UTC');
    expect(markdown).not.toContain(record.startedAt);
  });

  it('is the same for the same folder and time', async () => {
    await renderDeepRunFolder(join(root, 'plain'), { now: new Date(0) });
    expect(await readFile(join(root, 'plain', 'report.html'), 'utf8')).toBe(html);
  });
});

describe('a deep report of hostile claims, section text, sub-questions and table names', () => {
  it('has no live script, iframe, event handler or javascript: URL', () => {
    const tags = liveTags(hostileHtml);
    expect(
      tags.filter((tag) =>
        ['script', 'iframe', 'object', 'embed', 'base', 'form', 'input'].includes(tag.name),
      ),
    ).toEqual([]);
    expect(tags.flatMap((tag) => tag.attributes.filter(([name]) => name.startsWith('on')))).toEqual([]);
    const urls = tags.flatMap((tag) =>
      tag.attributes
        .filter(([name]) => ['href', 'src', 'xlink:href', 'action'].includes(name))
        .map(([, value]) => value),
    );
    expect(urls.filter((url) => !/^(?:https?:|#|data:image\/png;base64,)/.test(url))).toEqual([]);
    expect(hostileHtml).toContain(`content="default-src 'none'; img-src data:;`);
  });

  it('shows the payloads as text', () => {
    expect(hostileHtml).toContain('&lt;script&gt;window.__xss = &quot;script&quot;&lt;/script&gt;');
    expect(hostileHtml).toContain('&lt;img src=x onerror=&quot;window.__xss = &#39;img&#39;&quot;&gt;');
    expect(hostileHtml).toContain('&lt;svg onload=&quot;window.__xss = &#39;svg&#39;&quot;&gt;');
    expect(hostileHtml).toContain('Cites EV999, which the evidence bank does not hold.');
    expect(hostileHtml).toContain('[image: tracker]');
  });

  it('keeps report.md inert: raw HTML defused, the javascript: link removed', () => {
    expect(hostileMarkdown).not.toContain('<script');
    expect(hostileMarkdown).not.toContain('<img src=x');
    expect(hostileMarkdown).not.toContain('javascript:');
    expect(hostileMarkdown).toContain('&lt;script&gt;');
  });
});

describe('failed and skipped sub-analyses', () => {
  it('are shown with their outcome, and a folder outside the run is not read', async () => {
    const outDir = join(root, 'failures');
    await buildRecordedDeepRun(outDir, (plain) => {
      const base = { tables: ['enlist.csv'], round: 1, termination: null, answer: null, evidenceIds: [] };
      return {
        ...plain,
        termination: {
          reason: 'max-sub-analyses',
          detail: 'Written after the budget of sub-analyses was spent.',
        },
        subAnalyses: [
          ...plain.subAnalyses,
          {
            ...base,
            id: 'S5',
            question: 'What does enlist.csv show?',
            outcome: 'failed',
            detail: 'Its sandbox failed to start.',
            runDir: 'sub/S5',
            startedAt: plain.startedAt,
            endedAt: plain.startedAt,
          },
          {
            ...base,
            id: 'S6',
            question: 'And the lists?',
            outcome: 'skipped',
            detail: 'The budget of sub-analyses was spent.',
            runDir: null,
            startedAt: null,
            endedAt: null,
          },
          {
            ...base,
            id: 'S7',
            question: 'Elsewhere?',
            outcome: 'incomplete',
            detail: 'Stalled.',
            runDir: '../../../etc',
            startedAt: null,
            endedAt: null,
          },
        ],
      };
    });
    await renderDeepRunFolder(outDir, { formats: ['html', 'md'] });
    const page = await readFile(join(outDir, 'report.html'), 'utf8');
    expect(page).toContain('<strong>Ended: max-sub-analyses.</strong>');
    expect(page).toMatch(
      /<article class="sub-analysis sub-failed" id="sub-S5">[\s\S]*?Its sandbox failed to start\.[\s\S]*?Its folder holds no trace\./,
    );
    expect(page).toMatch(
      /<article class="sub-analysis sub-skipped" id="sub-S6">[\s\S]*?skipped: never started/,
    );
    expect(page).toContain('Its folder is not inside the deep run folder, so it was not read.');
    expect(page).toContain('1 failed, 1 skipped, 1 incomplete');
    const md = await readFile(join(outDir, 'report.md'), 'utf8');
    expect(md).toContain('### S5: What does enlist.csv show?');
    expect(md).toContain('- Outcome: **skipped**');
  });
});

describe('the report of a cancelled deep run', () => {
  it('looks cancelled from the title down and says which sub-analyses were stopped before compressing, with their rounds', async () => {
    const outDir = join(root, 'cancelled');
    await buildRecordedDeepRun(outDir, (plain) => ({
      ...plain,
      termination: { reason: 'cancelled', detail: 'The run was cancelled.' },
      subAnalyses: plain.subAnalyses.map((sub) => ({
        ...sub,
        outcome: 'cancelled',
        detail: 'The run was cancelled while it ran.',
        evidenceIds: [],
      })),
      evidence: [],
      outline: null,
      sections: [],
    }));
    await renderDeepRunFolder(outDir, { formats: ['html', 'md'], now: new Date(0) });
    const page = await readFile(join(outDir, 'report.html'), 'utf8');
    const text = await readFile(join(outDir, 'report.md'), 'utf8');
    expect(page).toMatch(/<title>Cancelled: /);
    expect(page).toContain('<body class="look-cancelled">');
    expect(page).toContain('<span class="toc-verdict">Cancelled</span>');
    expect(page).toContain('<header id="top" class="band band-cancelled">');
    expect(page).toMatch(/<h1><span class="title-verdict">Cancelled:<\/span> /);
    // Not "the evidence bank is empty" as if nothing had been done: what was stopped, and after how many rounds.
    expect(page).not.toContain('The evidence bank is empty.');
    const stopped =
      /S1 \(\d+ rounds?\), S2 \(\d+ rounds?\), S3 \(\d+ rounds?\) and S4 \(\d+ rounds?\) were cancelled before their findings were compressed into evidence/;
    expect(page).toMatch(stopped);
    expect(page.match(new RegExp(stopped.source, 'g'))?.length).toBe(2); // the band and the Evidence section
    expect(text).toMatch(/^# Cancelled: /);
    expect(text).toContain('> **Cancelled. What happened:** The run was cancelled.');
    expect(text.replace(/\\/g, '')).toMatch(stopped);
    // Questions 5 and 6 were left out by the budget, not by the cancel.
    expect(page).toContain('<code>--sub-analyses 6</code>');
  });

  it('names the files deep.json recorded as unreadable; a deep.json without the record (older) still renders', async () => {
    const outDir = join(root, 'unreadable');
    await buildRecordedDeepRun(outDir, (plain) => ({
      ...plain,
      unreadableFiles: [{ path: 'broken <b>.xlsx', error: 'File is not a zip file' }],
    }));
    await renderDeepRunFolder(outDir, { formats: ['html', 'md'], now: new Date(0) });
    const page = await readFile(join(outDir, 'report.html'), 'utf8');
    const text = await readFile(join(outDir, 'report.md'), 'utf8');
    expect(page).toContain(
      '<li><span class="mono">broken &lt;b&gt;.xlsx</span>: File is not a zip file</li>',
    );
    expect(text).toContain('### Files that could not be read');
    expect(text).toMatch(/^- broken .*\.xlsx: File is not a zip file$/m);
    // The plain run's deep.json has no such record, and its sub-analyses' profile read every file.
    expect(record.unreadableFiles).toBeUndefined();
    expect(html).not.toContain('Files that could not be read');
  });
});
