import { describe, expect, it } from 'vitest';
import { buildNumberIndex } from '../../src/trace/number-grounding.ts';
import { renderGroundedAnswer, renderSafeMarkdown } from '../../src/report/safe-markdown.ts';

const index = buildNumberIndex([{ outputId: 'E2', text: 'mean 6.391960\ncount 1194\nyear 2019' }]);
const anchor = (outputId: string): string => `output-${outputId}`;

describe('renderSafeMarkdown', () => {
  it('escapes raw HTML instead of passing it through', () => {
    expect(renderSafeMarkdown('a <b onclick="x()">b</b>')).toBe(
      '<p>a &lt;b onclick=&quot;x()&quot;&gt;b&lt;/b&gt;</p>\n',
    );
  });

  it('keeps http, https, mailto and # links and drops other schemes', () => {
    const html = renderSafeMarkdown(
      '[a](https://x.org) [b](mailto:me@x.org) [c](#answer) [d](javascript:alert(1)) [e](file:///etc/passwd) [f](report.csv)',
    );
    expect(html).toContain('<a href="https://x.org" rel="noopener noreferrer nofollow">a</a>');
    expect(html).toContain('<a href="mailto:me@x.org" rel="noopener noreferrer nofollow">b</a>');
    expect(html).toContain('<a href="#answer">c</a>');
    expect(html).not.toMatch(/href="(javascript|file|report)/);
  });

  it('never loads an image: remote ones become links, others their alt text', () => {
    expect(renderSafeMarkdown('![chart](https://x.org/c.png)')).toContain(
      '<a href="https://x.org/c.png" rel="noopener noreferrer nofollow">[image: chart]</a>',
    );
    // A relative target is not a link at all: the text stays as written.
    expect(renderSafeMarkdown('![local](plot.png)')).toBe('<p>![local](plot.png)</p>\n');
    expect(renderSafeMarkdown('![x](data:image/png;base64,AAAA)')).not.toContain('<img');
  });
});

describe('renderGroundedAnswer', () => {
  it('marks numbers in text but not list markers, inline code, link text or heading years', () => {
    const answer = [
      '## 2019 results',
      '',
      '1. Mean 6.39 over 1,194 rows',
      '2. Not `6.39` in code, nor [6.39](https://x.org)',
      '',
      'Revenue 8.92 and 2019.',
    ].join('\n');
    const { html, numbers } = renderGroundedAnswer(answer, index, anchor);
    expect(numbers.map((number) => [number.text, number.verified])).toEqual([
      ['6.39', true],
      ['1,194', true],
      ['8.92', false],
      ['2019', true],
    ]);
    expect(html).toContain('<h2>2019 results</h2>');
    expect(html).toContain(
      '<li>Mean <a class="num num-verified" href="#output-E2" title="Verified: output E2 printed 6.391960">6.39<sup>E2</sup></a>',
    );
    expect(html).toContain('<code>6.39</code>');
    expect(html).toContain(
      '<span class="num num-unverified" title="Unverified: no execution output printed this number">8.92<sup>?</sup></span>',
    );
  });

  it('links a number by the answer’s words around it, also those in inline code (`price`)', () => {
    const twoMeans = buildNumberIndex([
      { outputId: 'E1', text: 'price mean 5.16' },
      { outputId: 'E2', text: 'units mean 5.16' },
    ]);
    const { numbers } = renderGroundedAnswer('The mean of `price` is 5.16.', twoMeans, anchor);
    expect(numbers.map((number) => number.outputId)).toEqual(['E1']);
  });

  it('escapes the text around marked numbers', () => {
    const { html } = renderGroundedAnswer('<script>x</script> 6.39 <b>', index, anchor);
    expect(html).toContain('&lt;script&gt;x&lt;/script&gt; <a class="num num-verified"');
    expect(html).toContain('</a> &lt;b&gt;');
  });
});
