import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox } from '../../src/sandbox/index.ts';
import type { TableProfile, WorkspaceProfile } from '../../src/sandbox/index.ts';
import { dataTables } from '../../src/report/data-profile-view.ts';
import { renderDataSection } from '../../src/report/data-section-html.ts';
import { outputAnchor } from '../../src/report/prepared-report.ts';
import { buildNumberIndex } from '../../src/trace/number-grounding.ts';

/**
 * The data section's alerts from the real in-sandbox profile of a made-up
 * table whose correlation, constant column, skew, cardinality and duplicate
 * rows are known.
 */

let workspace = '';
let profile: WorkspaceProfile;

const hostileColumn = '<img src=x onerror="window.__xss=1">';

beforeAll(async () => {
  workspace = await mkdtemp(join(tmpdir(), 'datalyst-data-alerts-'));
  const lines = ['x,y,noise,constant,skewed,label,flag,"' + hostileColumn.replace(/"/g, '""') + '"'];
  const row = (i: number): string =>
    // y = 3x + 1 exactly (r = 1); noise follows a fixed permutation (r with x near 0).
    [
      i,
      3 * i + 1,
      (i * 37) % 200,
      'same',
      Math.exp(i / 20).toFixed(3),
      `item ${i} of the list`,
      i % 2 === 0 ? 'a' : 'b',
      '<b>v</b>',
    ].join(',');
  for (let i = 0; i < 200; i++) lines.push(row(i));
  for (let i = 0; i < 7; i++) lines.push(row(i)); // 7 rows that repeat an earlier one
  await writeFile(join(workspace, 'made-up.csv'), `${lines.join('\n')}\n`);
  const session = await createSandbox({ workspaceDir: workspace });
  try {
    profile = await session.profileWorkspace();
  } finally {
    await session.close();
  }
});

afterAll(async () => {
  await rm(workspace, { recursive: true, force: true });
});

function table(): TableProfile {
  const found = profile.files[0]?.tables[0];
  if (!found) throw new Error('no table profiled');
  return found;
}

describe('the in-sandbox profile of a made-up table', () => {
  it('counts the duplicate rows and finds the correlation, with statistics per column', () => {
    expect(table().rows).toBe(207);
    expect(table().statsRows).toBe(207);
    expect(table().duplicateRows).toBe(7);
    expect(table().correlations?.[0]).toEqual({ a: 'x', b: 'y', r: 1 });
    expect(table().correlations?.some((pair) => pair.a === 'noise' || pair.b === 'noise')).toBe(false);
    const x = table().columns.find((column) => column.name === 'x');
    expect(x?.mean).toBeCloseTo((19_900 + 21) / 207, 6);
    expect(x?.histogram?.counts.reduce((sum, count) => sum + count, 0)).toBe(207);
    const flag = table().columns.find((column) => column.name === 'flag');
    expect(flag?.topValues).toEqual([
      { value: 'a', count: 104 },
      { value: 'b', count: 103 },
    ]);
  });

  it('raises the alerts a profiling report raises: correlation, constant, skew, high cardinality, duplicates', () => {
    const [view] = dataTables(profile);
    const alerts = (view?.alerts ?? []).map((alert) => `${alert.kind}: ${alert.columns.join(' & ')}`);
    expect(alerts).toEqual(
      expect.arrayContaining([
        'duplicates: ',
        'correlation: x & y',
        'constant: constant',
        'skewed: skewed',
        'high-cardinality: label',
      ]),
    );
    expect(alerts.filter((alert) => alert.includes('noise') || alert.startsWith('missing'))).toEqual([]);
    expect(view?.alerts.find((alert) => alert.kind === 'duplicates')?.text).toBe(
      '7 rows (3.4%) repeat an earlier row.',
    );
  });

  it('shows a hostile column name and value as text, and links a number an output printed', () => {
    const index = buildNumberIndex([{ outputId: 'E4', text: 'rows repeated: 7 of 207 (3.38%)' }]);
    const html = renderDataSection(profile, index, outputAnchor);
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<b>');
    expect(html).toContain('&lt;img src=x onerror=&quot;window.__xss=1&quot;&gt;');
    expect(html).toContain('&lt;b&gt;v&lt;/b&gt;');
    expect(html).toContain('(<a class="num num-verified" href="#output-E4"');
    // A measure's max is grouped like its mean ("20,952.222", not "20952.222").
    const skewed = table().columns.find((column) => column.name === 'skewed');
    expect(skewed?.max).toBe('20952.222');
    expect(html).toContain('<span class="stat-name">max</span> 20,952.222</span>');
    // A top value and its count do not run together ("a 104" read as two values).
    expect(html).toContain(
      '<span class="top" title="a: 104 rows"><span class="mono">a</span> <span class="stat-name">(104)</span></span>',
    );
  });
});
