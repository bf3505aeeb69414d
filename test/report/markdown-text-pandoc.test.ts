import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { neutralizeInlineMarkdown, neutralizeMarkdown } from '../../src/report/markdown-text.ts';

/**
 * report.md read by pandoc (`pandoc report.md -o report.html`), whose own
 * markdown has more than CommonMark: attributes after links, headings,
 * spans, div fences and code spans (`{onclick=…}`), raw blocks and inlines
 * (```` ```{=html} ````, `` `…`{=html} ``), and more list markers (`a.`,
 * `(1)`, `#.`, `(@)`, definition lists) before a link definition. Each was
 * live HTML or a live javascript: link there (found by a review with pandoc
 * 2.17, Debian's). Needs Debian's pandoc (scripts/test.sh installs it).
 */
async function pandoc(markdown: string, from: string): Promise<string> {
  const { stdout } = await execa('pandoc', ['-f', from, '-t', 'html'], { input: markdown });
  return stdout;
}

const attacks = [
  '```{=html}\n<img src=x onerror=alert(1)>\n```',
  '``` {=html}\n<img src=x onerror=alert(1)>\n```',
  '~~~{=html}\n<img src=x onerror=alert(1)>\n~~~',
  '```python {onclick="alert(1)"}\nx = 1\n```',
  '[x](https://a.org){onclick="alert(1)"}',
  '# Hi {onmouseover="alert(1)"}',
  '::: {onclick="alert(1)"}\ntext\n:::',
  '[x]{onclick="alert(1)"}',
  '`<img src=x onerror=alert(1)>`{=html}',
  '`code`{.x onclick="alert(1)"}',
  'a. [x]: javascript:alert(1)\n\nsee [x]',
  '(1) [x]: javascript:alert(1)\n\nsee [x]',
  '#. [x]: javascript:alert(1)\n\nsee [x]',
  '(@) [x]: javascript:alert(1)\n\nsee [x]',
  'Term\n:   [x]: javascript:alert(1)\n\nsee [x]',
  'Term\n~   [x]: javascript:alert(1)\n\nsee [x]',
  '![](https://a.org/]:javascript:alert(1)//)\n\nsee [x][image: https://a.org/]',
];

/** Anything in pandoc's HTML that runs or loads: an event handler, a script, an image, an unsafe link. */
const unsafe = /<[a-z][^>]*\son[a-z]+\s*=|<script|<img|<iframe|(?:href|src)="(?!https?:|mailto:|#)/i;

describe("neutralized Markdown read by pandoc's own markdown", () => {
  for (const from of ['markdown', 'commonmark_x'])
    it(`makes nothing live of pandoc's extensions (-f ${from})`, async () => {
      for (const attack of attacks) {
        const html = await pandoc(neutralizeMarkdown(attack), from);
        expect(html, `${attack}\n→ ${neutralizeMarkdown(attack)}`).not.toMatch(unsafe);
        // As a list item's text, as the notebook and the sections write model text.
        const inline = await pandoc(`- ${neutralizeInlineMarkdown(attack)}`, from);
        expect(inline, attack).not.toMatch(unsafe);
      }
    });

  it('shows what it escaped as written', async () => {
    const html = await pandoc(
      neutralizeMarkdown('The set {x = 1} and `f{a=1}` and [1]: Smith et al.'),
      'markdown',
    );
    expect(html).toContain('The set {x = 1} and <code>f{a=1}</code> and [1]: Smith et al.');
  });

  it('was live before (the test sees what it looks for)', async () => {
    expect(await pandoc('[x](https://a.org){onclick="alert(1)"}', 'markdown')).toMatch(unsafe);
    expect(await pandoc('```{=html}\n<img src=x onerror=alert(1)>\n```', 'markdown')).toMatch(unsafe);
    expect(await pandoc('a. [x]: javascript:alert(1)\n\nsee [x]', 'markdown')).toMatch(unsafe);
  });
});
