import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderReport } from '../../src/report/index.ts';
import { traceRecordSchema, type TraceRecord } from '../../src/trace/schema.ts';
import { makeSyntheticTrace } from '../fixtures/traces/synthetic-trace.ts';

let root = '';
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'datalyst-runtime-provenance-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

function withRuntime(records: readonly TraceRecord[], runtime: string | undefined): TraceRecord[] {
  return records.map((record) => {
    if (record.type !== 'run-start') return record;
    const { runtime: _previous, ...environment } = record.environment;
    return { ...record, environment: runtime === undefined ? environment : { ...environment, runtime } };
  });
}

async function provenanceOf(records: TraceRecord[], name: string): Promise<string> {
  const outDir = join(root, name);
  await renderReport(records, { outDir, formats: ['md', 'html'], now: new Date('2025-03-02T00:00:00Z') });
  const markdown = await readFile(join(outDir, 'report.md'), 'utf8');
  return markdown.split('\n').find((line) => line.includes('**Tool versions:**')) ?? '';
}

describe("the container runtime in a report's provenance", () => {
  const { records } = makeSyntheticTrace({ rounds: 1, charts: 0, figures: 0 });

  it('is recorded in the trace as one optional field, read back as written', () => {
    const start = withRuntime(records, 'runsc')[0];
    expect(traceRecordSchema.parse(JSON.parse(JSON.stringify(start)))).toEqual(start);
    // A trace written before the field existed still reads.
    const old = withRuntime(records, undefined)[0];
    expect(traceRecordSchema.parse(JSON.parse(JSON.stringify(old)))).toEqual(old);
  });

  it('is shown next to the sandbox, and gVisor is named', async () => {
    const line = await provenanceOf(withRuntime(records, 'runsc'), 'runsc');
    // Markdown escapes the parentheses.
    expect(line).toContain('Sandbox docker, Container runtime runsc \\(gVisor\\)');
    expect(await provenanceOf(withRuntime(records, 'runc'), 'runc')).toContain('Container runtime runc');
  });

  it('is left out for a trace that does not record it', async () => {
    expect(await provenanceOf(withRuntime(records, undefined), 'none')).not.toContain('Container runtime');
  });
});
