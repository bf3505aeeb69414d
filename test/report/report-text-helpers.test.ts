import Papa from 'papaparse';
import { describe, expect, it } from 'vitest';
import { tableToCsv } from '../../src/report/csv-export.ts';
import {
  escapeMarkdownText,
  fencedBlock,
  inlineCodeMarkdown,
  neutralizeInlineMarkdown,
  neutralizeMarkdown,
} from '../../src/report/markdown-text.ts';
import MarkdownIt from 'markdown-it';
import { cleanOutputText } from '../../src/trace/output-text.ts';
import { nestedHeadingLevels } from '../../src/report/safe-markdown.ts';
import { formatUtcTime } from '../../src/report/report-format.ts';

describe('cleanOutputText', () => {
  it('removes colour and cursor escapes, OSC titles and stray control characters', () => {
    expect(cleanOutputText('\u001b[1;31mred\u001b[0m \u001b]0;title\u0007ok\u0000\u0008!\n')).toBe(
      'red ok!\n',
    );
  });

  it('keeps what a terminal finally shows of carriage-return progress lines', () => {
    expect(cleanOutputText('step 1\r\nloading 10%\rloading 50%\rloading 100%\ndone\r')).toBe(
      'step 1\nloading 100%\ndone',
    );
  });

  it('keeps tabs, newlines and unicode', () => {
    expect(cleanOutputText('a\tb\nχ² = 8.92 — ok\n')).toBe('a\tb\nχ² = 8.92 — ok\n');
  });
});

describe('tableToCsv', () => {
  it('guards formula cells and leaves plain signed numbers alone', () => {
    const csv = tableToCsv({
      id: 't',
      columns: ['=cmd', 'value'],
      index: ['0', '1', '2', '3', '4'],
      rows: [
        ['=1+1', -2],
        ['+SUM(A1)', '+1.5e3'],
        ['-2+3', '@me'],
        ['\tx', '\rx'],
        [null, true],
      ],
      totalRows: 5,
      totalColumns: 2,
      truncated: false,
    });
    const parsed = Papa.parse<string[]>(csv).data;
    expect(parsed).toEqual([
      ['', "'=cmd", 'value'],
      ['0', "'=1+1", '-2'],
      ['1', "'+SUM(A1)", '+1.5e3'],
      ['2', "'-2+3", "'@me"],
      ['3', "'\tx", "'\rx"],
      ['4', '', 'true'],
    ]);
  });
});

describe('neutralizeMarkdown', () => {
  it('defuses HTML and unsafe links, turns images into links, leaves code blocks alone', () => {
    const text = [
      '<img src=x onerror=alert(1)> [ok](https://a.org) [bad](javascript:alert(1))',
      '![p](https://a.org/p.png) ![q](q.png)',
      '[ref]: javascript:alert(1)',
      '```html',
      '<b>code</b>',
      '```',
    ].join('\n');
    expect(neutralizeMarkdown(text).split('\n')).toEqual([
      '&lt;img src=x onerror=alert(1)> [ok](https://a.org) [bad](#unsafe-link-removed)',
      '[image: p](https://a.org/p.png) *[image: q]*',
      '\\[ref]: javascript:alert(1)',
      '```html',
      '<b>code</b>',
      '```',
    ]);
  });
});

describe('neutralizeMarkdown and images that hide', () => {
  it('leaves no "![" before a link it made, nor a reference-style image', () => {
    // "!![x](https://…)" became "![image: x](https://…)": a live remote image in report.md.
    expect(
      neutralizeMarkdown(
        '!![x](https://evil.example/t.png) and ![y][pixel]\n[pixel]: https://evil.example/p.png',
      ),
    ).toBe(
      '&#33;[image: x](https://evil.example/t.png) and &#33;[y][pixel]\n[pixel]: https://evil.example/p.png',
    );
  });

  it('leaves no image when the text escaped the "!" itself (its backslash escaped the one that escaped "![")', () => {
    const commonMark = new MarkdownIt({ html: true });
    for (const markdown of [
      neutralizeMarkdown('[r]: https://evil.example/p.png\n\n\\![x][r]'),
      neutralizeMarkdown('\\![x\n](https://evil.example/p.png)'),
      `- ${neutralizeInlineMarkdown('a \\![x')}${neutralizeInlineMarkdown('](https://evil.example/p.png)')}`,
    ])
      expect(commonMark.render(markdown), markdown).not.toMatch(/<img\b/);
  });
});

describe('neutralizeMarkdown heading levels', () => {
  it('nests model headings under the report headings, but not inside code blocks', () => {
    expect(
      neutralizeMarkdown('# Title\n## Part\n```\n# comment\n```\n###### Deep', { demoteHeadings: 2 }),
    ).toBe('### Title\n#### Part\n```\n# comment\n```\n###### Deep');
  });

  it('nests them one level below the report heading whatever level they start at, skipping none (## under ### was #####)', () => {
    expect(
      neutralizeMarkdown('## The data\n#### Detail\n```\n# comment\n```\n## How to read this', {
        nestHeadingsUnder: 3,
      }),
    ).toBe('#### The data\n##### Detail\n```\n# comment\n```\n#### How to read this');
    expect(nestedHeadingLevels([1, 3, 6, 2], 4)).toEqual([5, 6, 6, 6]);
    expect(nestedHeadingLevels([3, 2], 2)).toEqual([3, 3]);
  });
});

describe('markdown helpers', () => {
  it('escapes data for a table cell', () => {
    expect(escapeMarkdownText('a|b <svg>\n*x*')).toBe('a\\|b &lt;svg&gt; \\*x\\*');
  });

  // A lone carriage return is a line ending to CommonMark: a column name holding one broke the table row.
  it('keeps data on one line whatever its line endings (\\r, \\r\\n, \\n)', () => {
    expect(escapeMarkdownText('a\rb\r\nc\nd')).toBe('a b c d');
  });

  it('chooses a fence longer than any backtick run in the content', () => {
    expect(fencedBlock('print("```")', 'python')).toBe('````python\nprint("```")\n````');
  });
});

/**
 * A line neutralizeMarkdown took for a code fence was left raw, but a
 * CommonMark renderer (a forge, an editor preview, Jupyter) may not see a
 * fence there: raw HTML and links in the "code" then went live. Rendered
 * here with markdown-it with HTML on, as such a renderer would.
 */
describe('neutralizeMarkdown fences a renderer does not see as fences', () => {
  const renderer = new MarkdownIt({ html: true });
  const live = (markdown: string) => renderer.render(neutralizeMarkdown(markdown));
  it.each([
    ['a backtick fence whose info string holds a backtick', '``` a`b\n<img src=x onerror=alert(1)>'],
    ['a fence indented by a tab (an indented code block)', '\t```\n<img src=x onerror=alert(1)>'],
    ['a fence inside a list item, then a line outside it', '- a\n\n  ```\n<img src=x onerror=alert(1)>'],
  ])('%s stays inert', (_name, markdown) => {
    expect(live(markdown)).not.toMatch(/<img/);
  });

  it('closes a fence the text left open, so the report after it is not code', () => {
    expect(live('```\ncode')).toMatch(/<\/code><\/pre>\s*$/);
    expect(neutralizeMarkdown('```\ncode').split('\n').at(-1)).toBe('```');
  });
});

describe('neutralizeMarkdown and code spans', () => {
  // The most permissive renderer: raw HTML on, GFM tables on.
  const commonMark = new MarkdownIt({ html: true });
  const rendered = (markdown: string): string => commonMark.render(markdown);

  it('shows `<` inside inline code as `<`, not `&lt;`', () => {
    const html = rendered(neutralizeMarkdown('Rows with `df[df.price < 0]` and <b>this</b>.'));
    expect(html).toContain('<code>df[df.price &lt; 0]</code>');
    expect(html).not.toContain('&amp;lt;');
    expect(html).not.toContain('<b>');
  });

  const attacks: Record<string, string> = {
    'a span across lines': 'text `start\nx` <img src=x onerror=alert(1)> `',
    'an opener left open before a blank line': 'a `x\n\n<img src=x onerror=alert(1)> `y`',
    'an escaped opener': 'a \\`<img src=x onerror=alert(1)>` b`',
    'a table row split inside a span': '| a | b |\n| - | - |\n| `x | <img src=x onerror=alert(1)>` | y |',
    'an image whose destination holds a backtick': '![a](u`) `<img src=x onerror=alert(1)>` `',
    'a link around a span': '[`<img src=x onerror=alert(1)>`](javascript:alert(1)) `ok`',
    'a heading': '## `<script>alert(1)</script>` #',
  };
  for (const [name, text] of Object.entries(attacks)) {
    it(`lets no raw HTML through: ${name}`, () => {
      const html = rendered(neutralizeMarkdown(text));
      expect(html).not.toMatch(/<(?:img|script)\b/);
      expect(html).not.toContain('javascript:');
    });
  }

  it('lets no raw HTML through when texts are written one after another on a line (neutralizeInlineMarkdown)', () => {
    // Callers put several texts on one line (a finding, then its source); a fence there is no fence.
    const pieces = [
      'ends with \\',
      '`<img src=x onerror=alert(1)>` tail',
      'a `x',
      'y` <img src=x onerror=alert(1)> `',
      '```\n<img src=x onerror=alert(1)>\n```',
    ];
    for (const first of pieces)
      for (const second of pieces) {
        const html = rendered(`- ${neutralizeInlineMarkdown(first)}${neutralizeInlineMarkdown(second)}`);
        expect(html, `${first} + ${second}`).not.toMatch(/<img\b/);
      }
  });
});

describe('neutralizeMarkdown on random text made of the pieces that shift code spans', () => {
  const commonMark = new MarkdownIt({ html: true });
  const pieces = [
    '`',
    '``',
    '\\',
    '<img src=x onerror=alert(1)>',
    '|',
    '\n',
    '\n\n',
    'a',
    ' ',
    '[x](',
    ')',
    '![',
    '- ',
    '    ',
    '&',
    // Backticks a renderer may not read as delimiters (a link's title or destination, a linkified URL), a lone \r.
    "'",
    '](#',
    'https://e.com/',
    '\r',
  ];
  // A small deterministic generator (mulberry32): the same texts on every run.
  let seed = 2026;
  const random = (): number => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const text = (): string =>
    Array.from(
      { length: 1 + Math.floor(random() * 12) },
      () => pieces[Math.floor(random() * pieces.length)],
    ).join('');

  it('never lets raw HTML through, alone or written after another neutralized text', () => {
    for (let round = 0; round < 3000; round += 1) {
      const first = text();
      const second = text();
      for (const markdown of [
        neutralizeMarkdown(first),
        `- ${neutralizeInlineMarkdown(first)}${neutralizeInlineMarkdown(second)}`,
        `${neutralizeMarkdown(first)}\n\n**E1** ${neutralizeInlineMarkdown(second)} — from *${neutralizeInlineMarkdown(first)}*`,
      ])
        expect(commonMark.render(markdown), JSON.stringify([first, second])).not.toMatch(/<img\b/);
      // Whatever a renderer pairs: no "<" is left outside a fence that could begin HTML.
      if (!/```|~~~/.test(first))
        expect(neutralizeMarkdown(first), JSON.stringify(first)).not.toMatch(/<[A-Za-z/!?]/);
    }
  });
});

/**
 * Backticks a renderer does not read as code-span delimiters (in a link's
 * destination or title, a reference label, a URL that linkify ends with a
 * backtick) pair the spans otherwise than a line-by-line count does: a `<tag`
 * kept raw "inside a span" was then raw HTML. A `<` that could begin HTML
 * or an autolink is now defused inside code spans too; the check below holds
 * whatever the renderer pairs.
 */
describe('neutralizeMarkdown keeps no < that could begin HTML, however a renderer pairs backticks', () => {
  const renderers = {
    'markdown-it': new MarkdownIt({ html: true }),
    'markdown-it with linkify (an editor preview)': new MarkdownIt({ html: true, linkify: true }),
  };
  const img = '<img src=x onerror=alert(1)>';
  const attacks: Record<string, string> = {
    'a link title holding a backtick': `[a](#x '\`') ${img} \``,
    'a link title on the next line holding a backtick': `[a](#x\n'\`') ${img} \``,
    'a link destination holding a backtick': `[a](#\`) ${img} \``,
    'a safe link whose title holds a backtick': `[a](https://example.com "\`") ${img} \``,
    'a reference label holding a backtick (commonmark.js, GitHub)': `[\`]: #x '\`'\n\n[b][\`] ${img} \``,
    'a URL that linkify ends with a backtick': `see https://example.com/\` ${img} \``,
    'a carriage return before an HTML block inside a span': `a \`x\r<div>${img}\``,
    'an email autolink inside a span': '`<x@example.com>`',
  };
  for (const [name, text] of Object.entries(attacks)) {
    it(`lets no raw HTML through: ${name}`, () => {
      const markdown = neutralizeMarkdown(text);
      expect(markdown).not.toMatch(/<[A-Za-z/!?]|<[^\s<>]*@/);
      for (const [renderer, md] of Object.entries(renderers))
        expect(md.render(markdown), renderer).not.toMatch(/<(?:img|div|a href="mailto)\b/);
    });
  }

  it('still shows a < that can begin nothing as < in a code span', () => {
    const html = renderers['markdown-it'].render(
      neutralizeMarkdown('`a < b`, `x <= 3`, `y <- 2`, `List<int>`'),
    );
    expect(html).toContain('<code>a &lt; b</code>');
    expect(html).toContain('<code>x &lt;= 3</code>');
    expect(html).toContain('<code>y &lt;- 2</code>');
    expect(html).toContain('<code>List&amp;lt;int&gt;</code>');
  });
});

describe('neutralizeMarkdown and links it cannot read', () => {
  // A destination with nested parentheses (CommonMark allows them balanced, at any depth) was not matched by
  // the link pattern, so its scheme was never checked: `javascript:` went through as a link.
  it('writes the `](` of a link whose destination it cannot check as text', () => {
    for (const text of [
      '[x](javascript:a((1)))',
      '![x](javascript:a((1)))',
      'see [x](javascript:a((((1)))) now',
    ]) {
      const out = neutralizeMarkdown(text);
      expect(out).not.toContain('](');
      // As a renderer that filters no URL (commonmark.js) renders it.
      const unfiltered = new MarkdownIt({ html: true });
      unfiltered.validateLink = () => true;
      expect(unfiltered.render(out)).not.toContain('href="javascript');
    }
    // Links it can check are kept as links.
    expect(neutralizeMarkdown('[ok](https://a.org/a_(b))')).toBe('[ok](https://a.org/a_(b))');
  });
});

describe('neutralizeMarkdown and link definitions a line does not show whole', () => {
  // A definition's destination may be on the next line, its label may run over lines, and it may sit in a
  // block quote or a list item. The line-by-line check saw none of these: a renderer that filters no URL
  // (pandoc, commonmark.js) made a live javascript: link of the reference below.
  const unfiltered = new MarkdownIt({ html: true });
  unfiltered.validateLink = () => true;
  const attacks = [
    '[x]:\njavascript:alert(1)\n\n[click][x]',
    '[x]:\n  <javascript:alert(1)>\n\n[click][x]',
    '[a\nb]: javascript:alert(1)\n\n[click][a b]',
    '> [x]: javascript:alert(1)\n\n[click][x]',
    '> [x]:\njavascript:alert(1)\n\n[click][x]',
    '- [x]: javascript:alert(1)\n\n[click][x]',
    '1. [x]: javascript:alert(1)\n\n[click][x]',
    '> - [x]:\n>   javascript:alert(1)\n\n[click][x]',
    '- a\n\n  [x]:\n  javascript:alert(1)\n\n[click][x]',
    '[x]: javascript:alert(1) "title"\n\n[click][x]',
    // An escaped `]` does not end the label: `[a\](x]:` is a definition, not a link whose text is `a\`.
    '[a\\](x]: javascript:alert(1)\n\nsee [click][a\\](x]',
    '> [a\\](https://a.org)x]: javascript:alert(1)\n\nsee [click][a\\](https://a.org)x]',
    '[a\\](\nx]:\njavascript:alert(1)\n\nsee [click][a\\]( x]',
    // An image made a link puts a `[` where a definition begins, after the check had run.
    '![a\\](https://a.org)]: javascript:alert(1)\n\nsee ![a\\](https://a.org)] and [click][image: a\\](https://a.org)]',
    '- ![a\\](https://a.org)]:\n  javascript:alert(1)\n\nsee [click][image: a\\](https://a.org)]',
    // An image's URL as the label of the link made of it: its `]:` ended the label (from a third review).
    '![](https://a.org/]:javascript:alert(1)//)\n\nsee [click][image: https://a.org/]',
    '> - ![](https://a.org/]:javascript:alert(1)//)\n\nsee [click][image: https://a.org/]',
    // A safe link's "title" holding an unsafe link: no link to a renderer, which then reads the inner one.
    'see [a](https://a.org [click](javascript:alert&#40;1&#41;))',
    '![a](https://a.org/p.png [click](javascript:alert&#40;1&#41;))',
  ];
  it('shows a line that only looks like one as written', () => {
    // `[1]: Smith et al.` was shown `[1]: #unsafe-link-removed et al.`: its "destination" is not http, https or mailto.
    for (const line of ['[1]: Smith et al. (2020)', '> [2]: see table 3', '[x]: javascript:alert(1)']) {
      const text = line.replace(/^> /, '');
      expect(unfiltered.render(neutralizeMarkdown(line))).toContain(`<p>${text}</p>`);
    }
    // A safe definition stays one.
    expect(unfiltered.render(neutralizeMarkdown('[a]: https://a.org\n\nsee [a]'))).toContain(
      '<a href="https://a.org">a</a>',
    );
  });
  for (const attack of attacks)
    it(`makes no javascript: link of ${JSON.stringify(attack)}`, () => {
      const html = unfiltered.render(neutralizeMarkdown(attack));
      // An https link whose path holds "javascript:" is no javascript: link.
      expect(html).not.toMatch(/href="(?!https?:)[^"]*javascript/i);
      expect(html).toContain('click');
    });

  it('reads block-quote markers of a line of several megabytes without overflowing the stack', () => {
    // One pattern with a repeated group kept backtracking state per `>`: 3.4 MB of them threw a RangeError.
    for (const line of ['>'.repeat(4_000_000) + '[x]:', '1) '.repeat(3_000_000)])
      expect(neutralizeMarkdown(line).length).toBeGreaterThan(0);
  });

  it('lets no raw HTML through in a label it does not take for a definition', () => {
    const html = unfiltered.render(neutralizeMarkdown('[a[<img src=x onerror=alert(1)>]: javascript:x'));
    expect(html).not.toMatch(/<img\b/);
    expect(html).not.toMatch(/href="[^"]*javascript/i);
  });

  it('keeps safe definitions, links at the start of a line, and shows an escaped `[` as `[`', () => {
    expect(neutralizeMarkdown('[x]: https://a.org\n\nsee [x]')).toBe('[x]: https://a.org\n\nsee [x]');
    expect(neutralizeMarkdown('- [x]: https://a.org')).toBe('- [x]: https://a.org');
    expect(neutralizeMarkdown('[text](https://a.org) and more')).toBe('[text](https://a.org) and more');
    expect(unfiltered.render(neutralizeMarkdown('[1] the source\n> [2] another'))).toBe(
      '<p>[1] the source</p>\n<blockquote>\n<p>[2] another</p>\n</blockquote>\n',
    );
  });
});

/** A carriage return alone is a line ending to CommonMark: it closed a fence, or ended a link definition, that neutralizeMarkdown did not see. */
describe('neutralizeMarkdown and carriage returns', () => {
  const commonMark = new MarkdownIt({ html: true });
  it('lets no raw HTML through after a fence a carriage return closes', () => {
    const text = '```\nfoo\r```\r<img src=x onerror=alert(1)>\n```';
    expect(commonMark.render(neutralizeMarkdown(text))).not.toMatch(/<img\b/);
  });

  it('makes text of an unsafe link definition ended by a carriage return or U+2028', () => {
    // A renderer that filters no URL (pandoc, commonmark.js): the line must be no definition.
    const unfiltered = new MarkdownIt({ html: true });
    unfiltered.validateLink = () => true;
    for (const text of ['[a]: javascript:alert(1)\r\n\n[a]', '[a]: javascript:alert(1)\u2028\n\n[a]']) {
      const html = unfiltered.render(neutralizeMarkdown(text));
      expect(html, JSON.stringify(text)).not.toMatch(/<a\b/);
      expect(html, JSON.stringify(text)).toContain('[a]: javascript:alert(1)');
    }
  });
});

describe('neutralizing a megabyte of text takes linear time', () => {
  const size = 1_000_000;
  const inputs: Record<string, string> = {
    'single backticks (each span looked for its closer from the start of the line)': 'a`'.repeat(size / 2),
    'spaces (the line-break pattern tried every start)': ' '.repeat(size),
    'a link left open': `](${'a'.repeat(size)}`,
    'images left open': '!['.repeat(size / 2),
    'a link definition ended by U+2028': `[a]: ${'x'.repeat(size)}\u2028`,
    'block quote and list markers before no definition': '> - 1. '.repeat(size / 7),
    'a label left open': `[${'a'.repeat(size)}`,
    'image URLs holding ]': '![](https://a.org/]'.repeat(size / 20),
  };
  // Linear, each takes well under a second; quadratic, each took minutes, past the time limit. No time is
  // asserted (tests assert no wall-clock times): the limit only stops a pattern that went quadratic again.
  for (const [name, text] of Object.entries(inputs))
    it(name, { timeout: 60_000 }, () => {
      expect(neutralizeMarkdown(text).length).toBeGreaterThan(0);
      expect(neutralizeInlineMarkdown(text).length).toBeGreaterThan(0);
    });

  it('chooses a fence for content with a megabyte of backtick runs', () => {
    expect(fencedBlock('`a'.repeat(size / 2), '').startsWith('```\n')).toBe(true);
  });
});

describe('inlineCodeMarkdown', () => {
  const commonMark = new MarkdownIt({ html: true });
  it('keeps backticked names as code spans and escapes the rest (a renderer that passes raw HTML still shows text)', () => {
    const text =
      'The answer names `revenue` and `<img src=x onerror=alert(1)>`; <b>bold</b> *not emphasis* <a href="`">` and `datalyst analyze`.';
    const html = commonMark.renderInline(inlineCodeMarkdown(text));
    expect(html).toContain('<code>revenue</code>');
    expect(html).toContain('<code>&lt;img src=x onerror=alert(1)&gt;</code>');
    expect(html).toContain('<code>datalyst analyze</code>');
    expect(html).not.toContain('<b>');
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<a ');
    expect(html).not.toContain('<em>');
  });

  it('a carriage return or newline inside backticks does not end the line (the text after it became blocks: raw HTML, a heading, a fence)', () => {
    for (const breaker of ['\r', '\n', '\r\n']) {
      const detail = `KeyError: column \`x${breaker}<div><img src=https://evil.example/t.png></div>\` missing; \`y${breaker}# Heading\`; \`z${breaker}~~~\``;
      const line = `> **Failed. What happened:** ${inlineCodeMarkdown(detail)}`;
      expect(line).not.toMatch(/[\r\n]/);
      const html = commonMark.render(`${line}\n\nafter`);
      expect(html).not.toContain('<img');
      expect(html).not.toContain('<div>');
      expect(html).not.toContain('<h1>');
      expect(html).not.toContain('<pre>');
      expect(html).toContain('<p>after</p>');
    }
  });
});

describe('formatUtcTime', () => {
  it('writes a recorded time in UTC with the month in full, whatever the machine', () => {
    expect(formatUtcTime('2026-11-24T14:05:12.123Z')).toBe('24 November 2026, 14:05 UTC');
    // Not "Sept" (recent ICU's en-GB) or "Sep" (older): the same text on every Node build.
    expect(formatUtcTime('2026-09-04T04:05:00Z')).toBe('4 September 2026, 04:05 UTC');
    // An offset is converted, and a minute is cut, never rounded into the next day.
    expect(formatUtcTime('2026-10-01T01:59:59.999+02:00')).toBe('30 September 2026, 23:59 UTC');
  });

  it('returns text that is no time as it is', () => {
    expect(formatUtcTime('not a time')).toBe('not a time');
  });
});
