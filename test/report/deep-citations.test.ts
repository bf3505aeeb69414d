import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkCitations } from '../../src/report/deep-run.ts';
import { renderDeepRunFolder } from '../../src/report/index.ts';
import { buildRecordedDeepRun } from '../deep/support/recorded-deep-run.ts';

/**
 * What broke: "[EV3][EV11]" (a claim two sub-analyses printed, cited twice) showed the first
 * citation as plain text in the HTML and the Markdown report: the link pattern refused a citation
 * followed by "[", to leave reference links alone, and so refused the next citation too.
 */

let root = '';
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'datalyst-deep-citations-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('citations in a row', () => {
  it('links each of any number of citations in a row, and leaves links and reference links as written', () => {
    const known = new Set(['EV1', 'EV2', 'EV3', 'EV11']);
    expect(linkCitations('Both [EV3][EV11].', known).markdown).toBe(
      'Both [EV3](#evidence-EV3)[EV11](#evidence-EV11).',
    );
    expect(linkCitations('[EV1][EV2][EV3] and [EV11]', known).markdown).toBe(
      '[EV1](#evidence-EV1)[EV2](#evidence-EV2)[EV3](#evidence-EV3) and [EV11](#evidence-EV11)',
    );
    // Already a link, or a reference link to a label of its own: not ours to change.
    expect(linkCitations('[EV1](#x) [EV2][note]', known).markdown).toBe('[EV1](#x) [EV2][note]');
    // One the bank does not hold stays text, and its neighbour is still linked.
    const mixed = linkCitations('[EV1][EV99][EV2]', known);
    expect(mixed.markdown).toBe('[EV1](#evidence-EV1)[EV99][EV2](#evidence-EV2)');
    expect(mixed.unknown).toEqual(['EV99']);
  });

  it('renders "[EV1][EV2][EV3]" as three links in report.html and report.md', async () => {
    const outDir = join(root, 'in-a-row');
    await buildRecordedDeepRun(outDir, (plain) => {
      const [first, ...rest] = plain.sections;
      if (first === undefined) throw new Error('fixture too small');
      const ids = plain.evidence.slice(0, 3).map((item) => item.id);
      const cited = ids.map((id) => `[${id}]`).join('');
      return {
        ...plain,
        outline:
          plain.outline === null
            ? null
            : {
                ...plain.outline,
                sections: plain.outline.sections.map((section) =>
                  section.id === first.id
                    ? { ...section, evidenceIds: [...new Set([...ids, ...section.evidenceIds])] }
                    : section,
                ),
              },
        sections: [{ ...first, markdown: `Three claims agree ${cited}.` }, ...rest],
      };
    });
    await renderDeepRunFolder(outDir, { formats: ['html', 'md'], now: new Date(0) });
    const html = await readFile(join(outDir, 'report.html'), 'utf8');
    const markdown = await readFile(join(outDir, 'report.md'), 'utf8');
    const section = html.slice(html.indexOf('id="section-SEC1"'), html.indexOf('id="section-SEC2"'));
    expect(section).toMatch(
      /Three claims agree <a href="#evidence-EV1">EV1<\/a><a href="#evidence-EV2">EV2<\/a><a href="#evidence-EV3">EV3<\/a>\./,
    );
    expect(section).not.toContain('[EV');
    expect(markdown).toContain(
      'Three claims agree [EV1](#evidence-EV1)[EV2](#evidence-EV2)[EV3](#evidence-EV3).',
    );
  });
});
