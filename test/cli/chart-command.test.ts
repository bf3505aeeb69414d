import { readFile, readdir, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { pointSpec } from '../support/chart-specs.ts';
import { removeTemporaryDirs, runDatalyst, temporaryDir } from './support/cli-harness.ts';

const pngMagic = [0x89, 0x50, 0x4e, 0x47];
const vl2svg = path.resolve(import.meta.dirname, '../../node_modules/vega-lite/bin/vl2svg');

afterAll(removeTemporaryDirs);

const barSpec = {
  $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
  title: 'Sales by region',
  data: { url: 'sales.csv' },
  mark: 'bar',
  encoding: {
    x: { field: 'region', type: 'nominal' },
    y: { field: 'sales', type: 'quantitative' },
  },
};
const salesCsv = 'region,sales\nNorth,120.5\nSouth,98\nEast,143.25\nWest,77\n';

describe('datalyst chart', () => {
  it('draws one spec to the SVG that vega-lite’s own vl2svg draws, byte for byte', async () => {
    const dir = await temporaryDir();
    const specPath = path.join(dir, 'points.vl.json');
    await writeFile(specPath, JSON.stringify(pointSpec(200, 'Two hundred points')));
    const run = await runDatalyst(['chart', specPath, '-o', path.join(dir, 'points.svg')], { cwd: dir });
    expect(run.stderr).toBe('');
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain('1 of 1 chart drawn');
    const ours = await readFile(path.join(dir, 'points.svg'), 'utf8');
    const { stdout: theirs } = await execa('node', [vl2svg, specPath], { stripFinalNewline: false });
    expect(ours).toContain('>Two hundred points</text>');
    expect(ours).toBe(theirs);
  });

  it('binds a CSV given with --data as vega loads it from data.url', async () => {
    const dir = await temporaryDir();
    const specPath = path.join(dir, 'bars.vl.json');
    await writeFile(specPath, JSON.stringify(barSpec));
    await writeFile(path.join(dir, 'sales.csv'), salesCsv);
    const run = await runDatalyst(['chart', 'bars.vl.json', '--data', 'sales.csv', '-o', 'bars.svg'], {
      cwd: dir,
    });
    expect(run.exitCode).toBe(0);
    const ours = await readFile(path.join(dir, 'bars.svg'), 'utf8');
    // vl2svg loads data.url from the spec's folder; datalyst never fetches, it binds --data.
    const { stdout: theirs } = await execa('node', [vl2svg, specPath], { stripFinalNewline: false });
    expect(ours).toContain('>East</text>');
    expect(ours).toBe(theirs);
  });

  it('draws many specs into a folder as PNG, and reports a broken one without losing the others', async () => {
    const dir = await temporaryDir();
    const names = ['first.vl.json', 'second.json', 'broken.vl.json'];
    await writeFile(path.join(dir, names[0] as string), JSON.stringify(pointSpec(30, 'First')));
    await writeFile(path.join(dir, names[1] as string), JSON.stringify(pointSpec(40, 'Second')));
    await writeFile(path.join(dir, names[2] as string), '{"mark": "point", ');
    const run = await runDatalyst(['chart', ...names, '--format', 'png', '-o', 'out'], { cwd: dir });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('broken.vl.json: The spec file is not valid JSON');
    expect(run.stderr).toContain('2 of 3 charts drawn');
    expect((await readdir(path.join(dir, 'out'))).sort()).toEqual(['first.png', 'second.png']);
    const png = await readFile(path.join(dir, 'out', 'first.png'));
    expect(Array.from(png.subarray(0, 4))).toEqual(pngMagic);
  });

  it('never fetches: a spec’s data.url without --data is no chart, with the fix', async () => {
    const dir = await temporaryDir();
    await writeFile(path.join(dir, 'bars.vl.json'), JSON.stringify(barSpec));
    const run = await runDatalyst(['chart', 'bars.vl.json', '-o', 'bars.svg'], { cwd: dir });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('loads its data from "sales.csv"');
    expect(run.stderr).toContain('pass the file with --data');
    expect(run.stderr).toContain('0 of 1 chart drawn');
    await expect(readFile(path.join(dir, 'bars.svg'), 'utf8')).rejects.toThrow();
  });

  it('draws a sum from every row of --data, or none: never the first rows’ sum', async () => {
    const dir = await temporaryDir();
    const sumSpec = {
      ...barSpec,
      encoding: { ...barSpec.encoding, y: { aggregate: 'sum', field: 'sales', type: 'quantitative' } },
    };
    await writeFile(path.join(dir, 'sum.vl.json'), JSON.stringify(sumSpec));
    // 6,000 rows sorted by region: the first 5,000 are all North.
    const rows = Array.from({ length: 6000 }, (_, index) => `${index < 3000 ? 'North' : 'South'},1`);
    await writeFile(path.join(dir, 'big.csv'), `region,sales\n${rows.join('\n')}\n`);
    const cut = await runDatalyst(['chart', 'sum.vl.json', '--data', 'big.csv', '-o', 'sum.svg'], {
      cwd: dir,
    });
    expect(cut.exitCode).toBe(2);
    expect(cut.stderr).toContain('6,000 rows, more than the 5,000');
    expect(cut.stderr).toContain('raise --max-rows');
    const whole = await runDatalyst(
      ['chart', 'sum.vl.json', '--data', 'big.csv', '--max-rows', '6000', '-o', 'sum.svg'],
      { cwd: dir },
    );
    expect(whole.exitCode).toBe(0);
    const svg = await readFile(path.join(dir, 'sum.svg'), 'utf8');
    expect(svg).toContain('>South</text>');
    expect(svg).toContain('>3,000</text>');
  });

  it('refuses what it cannot do before drawing, with the fix', async () => {
    const dir = await temporaryDir();
    await writeFile(path.join(dir, 'a.vl.json'), JSON.stringify(pointSpec(5)));
    await writeFile(path.join(dir, 'b.vl.json'), JSON.stringify(pointSpec(5)));
    const twoIntoOne = await runDatalyst(['chart', 'a.vl.json', 'b.vl.json', '-o', 'one.svg'], { cwd: dir });
    expect(twoIntoOne.exitCode).toBe(2);
    expect(twoIntoOne.stderr).toContain('CONFIG_INVALID');
    expect(twoIntoOne.stderr).toContain('Name a folder with -o');

    await writeFile(path.join(dir, 'a.svg'), 'not a spec');
    const overInput = await runDatalyst(['chart', 'a.svg', '-o', 'a.svg'], { cwd: dir });
    expect(overInput.exitCode).toBe(2);
    expect(overInput.stderr).toContain('is one of the input files');
    expect(await readFile(path.join(dir, 'a.svg'), 'utf8')).toBe('not a spec');

    // A data file past the limit is refused unread (a sparse file: no disk used).
    await writeFile(path.join(dir, 'huge.csv'), '');
    await truncate(path.join(dir, 'huge.csv'), 65 * 1024 * 1024);
    const huge = await runDatalyst(['chart', 'a.vl.json', '--data', 'huge.csv', '-o', 'a-out.svg'], {
      cwd: dir,
    });
    expect(huge.exitCode).toBe(2);
    expect(huge.stderr).toContain('more than the 64 MB a chart reads');

    await writeFile(path.join(dir, 'data.xlsx'), 'PK');
    const badData = await runDatalyst(['chart', 'a.vl.json', '--data', 'data.xlsx', '-o', 'a-out.svg'], {
      cwd: dir,
    });
    expect(badData.exitCode).toBe(2);
    expect(badData.stderr).toContain('must be .csv, .tsv or .json');

    // An image type it does not write is refused, not made a folder of that name.
    const jpeg = await runDatalyst(['chart', 'a.vl.json', '-o', 'a.jpg'], { cwd: dir });
    expect(jpeg.exitCode).toBe(2);
    expect(jpeg.stderr).toContain('names a .jpg file, which Datalyst does not write');
    expect(jpeg.stderr).toContain('Name a .svg, .png or .pdf file, or a folder.');
    expect(await readdir(dir)).not.toContain('a.jpg');
  });

  it('says when the encoding names a field the data lacks (vega-lite draws empty axes without a word), and echoes paths as given', async () => {
    const dir = await temporaryDir();
    const typo = {
      data: {
        values: [
          { month: '2024-01', units: 10 },
          { month: '2024-02', units: 14 },
        ],
      },
      mark: 'line',
      encoding: { x: { field: 'month', type: 'temporal' }, y: { field: 'unit', type: 'quantitative' } },
    };
    await writeFile(path.join(dir, 'typo.vl.json'), JSON.stringify(typo));
    const out = path.join(dir, 'typo.svg');
    const run = await runDatalyst(['chart', 'typo.vl.json', '-o', out], { cwd: dir });
    expect(run.exitCode).toBe(0);
    expect(run.stderr).toContain(
      'The encoding uses "unit", which the data does not have (its fields: "month", "units"): the chart has nothing to draw there.',
    );
    // Inside the working folder a path is shown relative to it.
    expect(run.stdout).toContain('✓ typo.svg');
    const outside = await temporaryDir();
    const elsewhere = await runDatalyst(
      ['chart', path.join(dir, 'typo.vl.json'), '-o', path.join(outside, 't.svg')],
      {
        cwd: dir,
      },
    );
    // Outside it, as given: not "../../tmp/…".
    expect(elsewhere.stdout).toContain(`✓ ${path.join(outside, 't.svg')}`);
  });
});
