import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { neutralizeInlineMarkdown, neutralizeMarkdown } from '../../src/report/markdown-text.ts';

/**
 * report.md read by pandoc (`pandoc -f gfm report.md -o report.html`), a
 * renderer that, unlike markdown-it, checks no link's scheme itself. Read as
 * what report.md is written in: GitHub-flavoured Markdown and CommonMark.
 * Pandoc's own `markdown` reader is another language (raw HTML blocks
 * `{=html}`, attributes `{onclick=…}`, grid tables whose cells hold blocks),
 * in which model text is not made inert: see the report's README. Needs
 * Debian's pandoc (scripts/test.sh installs it).
 */
async function pandoc(markdown: string, from: string): Promise<string> {
  const { stdout } = await execa('pandoc', ['-f', from, '-t', 'html'], { input: markdown });
  return stdout;
}

const attacks = [
  '[x]: javascript:alert(1)\n\nsee [x]',
  '[x]:\njavascript:alert(1)\n\nsee [x]',
  '> - [x]:\n>   javascript:alert(1)\n\nsee [x]',
  '[a\\](x]: javascript:alert(1)\n\nsee [x][a\\](x]',
  '<img src=x onerror=alert(1)> [a](javascript:alert(1))',
  // From a third review: an image URL holding `]:` made a link definition of the link the image became, and
  // a safe link whose "title" held an unsafe link was taken whole as safe.
  '![](https://a.org/]:javascript:alert(1)//)\n\nsee [x][image: https://a.org/]',
  'see [a](https://a.org [b](javascript:alert&#40;1&#41;))',
  '![a](https://a.org/p.png [b](javascript:alert&#40;1&#41;))',
];

/** Anything in the HTML that runs or loads: an event handler on a tag, a script, an image, an unsafe link. */
const unsafe = /<[a-z][^>]*\son[a-z]+\s*=|<script|<img|<iframe|(?:href|src)="(?!https?:|mailto:|#)/i;

describe('neutralized Markdown read by pandoc', () => {
  for (const from of ['gfm', 'commonmark'])
    it(`makes no live link, image or HTML (-f ${from})`, async () => {
      for (const attack of attacks) {
        const html = await pandoc(neutralizeMarkdown(attack), from);
        expect(html, `${attack}\n→ ${neutralizeMarkdown(attack)}`).not.toMatch(unsafe);
        // As a list item's text, as the notebook and the deep report's sections write model text.
        const inline = await pandoc(`- ${neutralizeInlineMarkdown(attack)}`, from);
        expect(inline, attack).not.toMatch(unsafe);
      }
    });

  it('shows a line that only looks like a link definition as written', async () => {
    expect(await pandoc(neutralizeMarkdown('[1]: Smith et al. (2020)'), 'gfm')).toContain(
      '[1]: Smith et al. (2020)',
    );
  });

  it('was live before (the test sees what it looks for)', async () => {
    for (const attack of attacks.slice(0, 3)) expect(await pandoc(attack, 'gfm')).toMatch(unsafe);
  });
});
