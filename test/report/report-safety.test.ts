import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderReport } from '../../src/report/index.ts';
import { makeHostileTrace } from '../fixtures/traces/hostile-trace.ts';

let outDir = '';
let html = '';
let markdown = '';

beforeAll(async () => {
  outDir = await mkdtemp(join(tmpdir(), 'datalyst-hostile-'));
  const rendered = await renderReport(makeHostileTrace(), { outDir });
  // Failed: the spec that does not compile, and the one that loads remote data (it would draw empty).
  expect(rendered.charts).toEqual({ rendered: 1, failed: 2 });
  html = await readFile(join(outDir, 'report.html'), 'utf8');
  markdown = await readFile(join(outDir, 'report.md'), 'utf8');
});
afterAll(async () => {
  await rm(outDir, { recursive: true, force: true });
});

interface LiveTag {
  name: string;
  attributes: Array<[string, string]>;
}

/** Tags and their attributes as a browser would see them (text and attribute values are escaped). */
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

describe('an HTML report of hostile model text and data', () => {
  it('has no live script, iframe, event handler or javascript: URL', () => {
    const tags = liveTags(html);
    expect(tags.length).toBeGreaterThan(200);
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
  });

  it('loads no remote image: img and image elements carry data: URIs only', () => {
    const sources = liveTags(html).flatMap((tag) =>
      ['img', 'image'].includes(tag.name)
        ? tag.attributes.filter(([name]) => ['src', 'href'].includes(name)).map(([, value]) => value)
        : [],
    );
    expect(sources.filter((source) => !source.startsWith('data:image/'))).toEqual([]);
    expect(html).toContain(
      '<a href="https://tracker.example/pixel.png" rel="noopener noreferrer nofollow">[image: tracker]</a>',
    );
  });

  it('shows the payloads as text', () => {
    expect(html).toContain('&lt;script&gt;window.__xss = &quot;script&quot;&lt;/script&gt;');
    expect(html).toContain('&lt;img src=x onerror=&quot;window.__xss = &#39;img&#39;&quot;&gt;');
    expect(html).toContain(
      '<th scope="col">&lt;svg onload=&quot;window.__xss = &#39;svg&#39;&quot;&gt;</th>',
    );
  });

  it('shows column names, values and file names of the data section as text', () => {
    const data = html.slice(html.indexOf('<section id="data">'), html.indexOf('<section id="process">'));
    expect(
      liveTags(data)
        .map((tag) => tag.name)
        .filter((name) => ['img', 'script', 'iframe'].includes(name)),
    ).toEqual([]);
    expect(data).toContain(
      '<th scope="row" class="mono">&lt;svg onload=&quot;window.__xss = &#39;svg&#39;&quot;&gt;</th>',
    );
    expect(data).toContain('&lt;script&gt;window.__xss = &quot;script&quot;&lt;/script&gt; is constant');
    expect(data).toContain('&lt;img src=x onerror=&quot;window.__xss = &#39;img&#39;&quot;&gt;.csv');
    expect(data).toContain('strongly correlated (r = 0.97)');
    // The first rows: every cell the data's text, a missing one empty.
    const firstRows = data.slice(data.indexOf('<details class="first-rows">'));
    expect(firstRows).toContain('<summary>First 2 rows</summary>');
    expect(firstRows).toContain(
      '<tr><td>&lt;img src=x onerror=&quot;window.__xss = &#39;img&#39;&quot;&gt;</td><td>&lt;script&gt;window.__xss = &quot;script&quot;&lt;/script&gt;</td></tr>',
    );
    expect(firstRows).toContain(
      '<tr><td></td><td>&lt;iframe src=&quot;https://evil.example/&quot;&gt;&lt;/iframe&gt;</td></tr>',
    );
  });

  it('keeps http(s) and in-report links, drops javascript:, data: and vbscript: links', () => {
    expect(html).toContain(
      '<a href="https://example.org/" rel="noopener noreferrer nofollow">a safe link</a>',
    );
    expect(html).toContain('<a href="#process">in report</a>');
    expect(html).toContain('[click me](javascript:window.__xss=');
    expect(html).not.toContain('href="data:text');
  });

  it('strips ANSI escapes and collapses carriage-return progress output', () => {
    expect(html).not.toContain('\u001b');
    expect(html).toContain('red error and bold green\nprogress 100%\ndone\n');
  });

  it('shows a chart that fails to compile as an error box, and a bad figure as a note', () => {
    expect(html).toContain(
      '<div class="chart-error" role="alert"><strong>This chart could not be drawn.</strong>',
    );
    expect(html).toContain('is not a valid PNG and was left out');
    expect(html).toContain('The chart loads its data from &quot;https://evil.example/data.csv&quot;');
  });
});

describe('a Markdown report of hostile model text and data', () => {
  it('defuses raw HTML, unsafe links and remote images outside code blocks', () => {
    // Code and outputs sit in fenced blocks, which Markdown renders as text.
    const outsideFences = markdown.replace(/^(`{3,})[^\n]*\n[\s\S]*?\n\1$/gm, '');
    expect(outsideFences).not.toMatch(/<script|<img|<iframe|<svg/i);
    expect(markdown).toContain('&lt;script>window.__xss = "script"&lt;/script>');
    expect(markdown).toContain('[click me](#unsafe-link-removed)');
    expect(markdown).toContain('[image: tracker](https://tracker.example/pixel.png)');
    expect(markdown).not.toMatch(/!\[tracker\]/);
    expect(markdown).not.toContain('\u001b');
  });

  it('exports tables as CSV with formula cells guarded', async () => {
    const csv = await readFile(join(outDir, 'assets', 'E3-table-1.csv'), 'utf8');
    expect(csv).toContain(`"'=HYPERLINK(""http://evil.example"")"`);
  });
});
