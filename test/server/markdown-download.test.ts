import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { selfContainedMarkdown } from '../../src/server/markdown-download.ts';

const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe('the Markdown report downloaded as one file', () => {
  it("inlines the report's own images, outside code only, never a file outside its folders or one that is no image", async () => {
    const runDir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-md-download-'));
    dirs.push(runDir);
    await mkdir(path.join(runDir, 'assets'));
    await mkdir(path.join(runDir, 'artifacts', 'plots'), { recursive: true });
    await writeFile(path.join(runDir, 'assets', 'E1-figure-1.png'), png);
    await writeFile(path.join(runDir, 'assets', 'E2-figure-1.png'), 'not a png');
    await writeFile(path.join(runDir, 'artifacts', 'plots', 'sales by region.png'), png);
    await writeFile(path.join(runDir, 'secret.png'), png);
    const markdown = [
      '![Figure 1 of output E1](assets/E1-figure-1.png)',
      '![Figure 1 of output E2](assets/E2-figure-1.png)',
      '![plots/sales by region.png](artifacts/plots/sales%20by%20region.png)',
      '![escape](assets/../secret.png)',
      '![escape](artifacts/%2e%2e/secret.png)',
      '[CSV](assets/E3-table-1.csv)',
      '```',
      '![in code](assets/E1-figure-1.png)',
      '```',
    ].join('\n');
    const folders = { assets: path.join(runDir, 'assets'), artifacts: path.join(runDir, 'artifacts') };
    const lines = (await selfContainedMarkdown(folders, markdown)).split('\n');
    const inline = `data:image/png;base64,${png.toString('base64')}`;
    expect(lines).toEqual([
      `![Figure 1 of output E1](${inline})`,
      '![Figure 1 of output E2](assets/E2-figure-1.png)',
      `![plots/sales by region.png](${inline})`,
      '![escape](assets/../secret.png)',
      '![escape](artifacts/%2e%2e/secret.png)',
      '[CSV](assets/E3-table-1.csv)',
      '```',
      '![in code](assets/E1-figure-1.png)',
      '```',
    ]);
  });
});
