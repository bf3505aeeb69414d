import { describe, expect, it } from 'vitest';
import { ProgressRenderer } from '../../src/cli/progress-renderer.ts';
import { describeRenderedReport } from '../../src/cli/report-summary.ts';

function closingLines(
  rendered: Parameters<typeof describeRenderedReport>[2],
  files: readonly string[] = ['/runs/r1/report.html'],
): string {
  let output = '';
  const renderer = new ProgressRenderer({
    write: (text) => (output += text),
    live: false,
    color: false,
    quiet: false,
  });
  describeRenderedReport(renderer, files, rendered, '/runs');
  return output;
}

const charts = { rendered: 0, failed: 0 };

describe('the closing lines after a report', () => {
  it("a conversation's closing summary counts every answer's numbers (it counted only the last answer)", () => {
    const output = closingLines({
      grounding: { checked: 4, verified: 4, unverified: 0 },
      conversation: { answers: 2, grounding: { checked: 111, verified: 110, unverified: 1 } },
      charts,
    });
    expect(output).toContain(
      "Numbers in the conversation's 2 answers: 110 of 111 found in the execution outputs.\n",
    );
    expect(output).not.toContain('4 of 4');
  });

  it('a run of one question speaks of the answer', () => {
    const output = closingLines({
      grounding: { checked: 4, verified: 4, unverified: 0 },
      conversation: null,
      charts,
    });
    expect(output).toContain('Numbers in the answer: 4 of 4 found in the execution outputs.\n');
  });

  it('names the report, not a figure it wrote first, when Markdown is the only format', () => {
    const output = closingLines({ grounding: { checked: 0, verified: 0, unverified: 0 }, charts }, [
      '/runs/r1/assets/E7-figure-1.png',
      '/runs/r1/report.md',
    ]);
    expect(output).toContain('Report: r1/report.md\n');
    expect(output).not.toContain('also:');
  });
});
