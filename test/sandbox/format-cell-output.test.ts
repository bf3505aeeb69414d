import { describe, expect, it } from 'vitest';
import { formatCellOutput } from '../../src/sandbox/index.ts';
import { cellResult } from '../support/cell-result.ts';

const text = (value: string) => ({ text: value, truncated: false, totalBytes: Buffer.byteLength(value) });

describe('formatCellOutput', () => {
  it("is stdout then stderr, as DeepAnalyze's executor joins them", () => {
    expect(formatCellOutput(cellResult({ stdout: text('a\n'), stderr: text('warning\n') }))).toBe(
      'a\nwarning\n',
    );
  });

  it('echoes the value on its own line after the output', () => {
    expect(formatCellOutput(cellResult({ stdout: text('printed'), value: '42' }))).toBe('printed\n42');
    expect(formatCellOutput(cellResult({ value: "'x'" }))).toBe("'x'");
  });

  it('keeps the output printed before an error and puts the traceback after [Error]:', () => {
    const traceback =
      'Traceback (most recent call last):\n  File "<cell-1>", line 2, in <module>\nKeyError: \'x\'\n';
    const formatted = formatCellOutput(
      cellResult({
        status: 'error',
        stdout: text('step 1\n'),
        stderr: text(`a warning\n${traceback}`),
        error: { name: 'KeyError', value: "'x'", traceback },
      }),
    );
    expect(formatted).toBe(`step 1\na warning\n[Error]:\n${traceback}`);
  });

  it('names the exception when the traceback is not there (stderr cut by the cap)', () => {
    const formatted = formatCellOutput(
      cellResult({ status: 'error', error: { name: 'ValueError', value: 'bad', traceback: '' } }),
    );
    expect(formatted).toBe('[Error]:\nValueError: bad\n');
  });

  it('says what a timeout, an out-of-memory kill or an output flood did', () => {
    expect(
      formatCellOutput(
        cellResult({
          status: 'timeout',
          statusDetail: 'The cell ran longer than 2 s and was interrupted; variables are kept.',
        }),
      ),
    ).toBe('[Timeout]: The cell ran longer than 2 s and was interrupted; variables are kept.');
    expect(formatCellOutput(cellResult({ status: 'memory', statusDetail: 'Out.', stateLost: true }))).toBe(
      '[Out of memory]: Out.',
    );
    expect(
      formatCellOutput(
        cellResult({
          status: 'output-limit',
          stdout: { text: 'xxxx', truncated: true, totalBytes: 1_000_000 },
          statusDetail: 'Too much.',
        }),
      ),
    ).toBe('xxxx\n[stdout truncated: the first 4 of 1000000 bytes are shown]\n[Output limit]: Too much.');
  });

  it('does not mention figures, charts or tables (the caller describes artifacts)', () => {
    const withArtifacts = cellResult({
      stdout: text('done\n'),
      figures: [{ id: 'f', mimeType: 'image/png', dataBase64: '', widthPx: 1, heightPx: 1 }],
    });
    expect(formatCellOutput(withArtifacts)).toBe('done\n');
  });
});
