import { readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, DatalystError } from '../../src/errors/index.ts';
import { renderReport, renderRunFolder } from '../../src/report/index.ts';
import { makeSyntheticTrace } from '../fixtures/traces/synthetic-trace.ts';
import { useTempDirs } from '../support/temp-dirs.ts';

/**
 * Regression: `renderRunFolder(d, { format: ['md'] })` wrote all four formats
 * and `{ formats: ['docx'] }` wrote nothing and resolved with `files: []`.
 * Both are ConfigErrors now, before anything is written.
 */

const tempDirs = useTempDirs();

async function runFolder(): Promise<string> {
  const dir = await tempDirs.make('datalyst-render-options-');
  const trace = makeSyntheticTrace({ rounds: 1, charts: 0 });
  await writeFile(
    path.join(dir, 'trace.jsonl'),
    trace.records.map((record) => JSON.stringify(record)).join('\n') + '\n',
  );
  return dir;
}

async function refusal(run: () => Promise<unknown>): Promise<DatalystError> {
  const error: unknown = await run().then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ConfigError);
  if (!DatalystError.isInstance(error)) throw new Error('not a DatalystError');
  expect(error.code).toBe('CONFIG_INVALID');
  expect(error.cause).toBeDefined();
  return error;
}

describe('the options of renderRunFolder', () => {
  it('format (for formats) is refused, naming formats; nothing is written', async () => {
    const dir = await runFolder();
    const error = await refusal(() => renderRunFolder(dir, { format: ['md'] } as never));
    expect(error.message).toBe('renderRunFolder() has no option format (did you mean formats?).');
    expect(await readdir(dir)).toEqual(['trace.jsonl']);
  });

  it('an unknown format is refused, naming the valid ones; nothing is written', async () => {
    const dir = await runFolder();
    const formats = ['docx'] as unknown as ['html'];
    const error = await refusal(() => renderRunFolder(dir, { formats }));
    expect(error.message).toBe(
      `The option formats of renderRunFolder() must be a list of one or more of 'html', 'md', 'ipynb', 'json', 'pdf'; got ["docx"].`,
    );
    expect(error.fix).toContain("'html', 'md', 'ipynb', 'json', 'pdf'");
    expect(await readdir(dir)).toEqual(['trace.jsonl']);
    await refusal(() => renderRunFolder(dir, { formats: [] }));
    await refusal(() => renderReport(makeSyntheticTrace().records, { outDir: dir, formats }));
  });

  it('known options still render', async () => {
    const dir = await runFolder();
    const rendered = await renderRunFolder(dir, { formats: ['md'] });
    expect(rendered.files.map((file) => path.basename(file))).toContain('report.md');
    expect(rendered.files.some((file) => file.endsWith('.html'))).toBe(false);
  });
});
