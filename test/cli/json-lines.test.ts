import { describe, expect, it } from 'vitest';
import { ModelUnavailableError } from '../../src/index.ts';
import { toJsonLine } from '../../src/cli/json-lines.ts';

describe('--json lines', () => {
  it('leave figure bytes out and keep everything else', () => {
    const line = toJsonLine({
      type: 'execution-end',
      round: 1,
      outputId: 'E1',
      result: {
        status: 'ok',
        stdout: { text: 'hi\n', truncated: false, totalBytes: 3 },
        stderr: { text: '', truncated: false, totalBytes: 0 },
        error: null,
        value: null,
        figures: [
          { id: 'f1', mimeType: 'image/png', dataBase64: 'A'.repeat(100_000), widthPx: 640, heightPx: 480 },
        ],
        charts: [],
        tables: [],
        files: [],
        durationMs: 5,
        stateLost: false,
        statusDetail: null,
      },
    });
    expect(line.endsWith('\n')).toBe(true);
    expect(line.split('\n')).toHaveLength(2);
    expect(line.length).toBeLessThan(1000);
    expect(JSON.parse(line)).toMatchObject({
      type: 'execution-end',
      result: { stdout: { text: 'hi\n' }, figures: [{ id: 'f1', widthPx: 640 }] },
    });
    expect(JSON.parse(line).result.figures[0]).not.toHaveProperty('dataBase64');
  });

  it('write errors as objects with code, message, fix and fault', () => {
    const line = toJsonLine(
      {
        type: 'error',
        error: new ModelUnavailableError('No answer.', { fix: 'Start it.' }),
      },
      new Date(Date.UTC(2025, 0, 2, 3, 4, 5)),
    );
    expect(JSON.parse(line)).toEqual({
      type: 'error',
      time: '2025-01-02T03:04:05.000Z',
      schemaVersion: 1,
      error: {
        name: 'ModelUnavailableError',
        code: 'MODEL_UNAVAILABLE',
        message: 'No answer.',
        fix: 'Start it.',
        fault: 'third-party',
      },
    });
  });

  it('begin with type, time (ISO 8601) and schemaVersion, in that order', () => {
    const line = toJsonLine({ type: 'round-start', round: 2 }, new Date(Date.UTC(2025, 0, 2, 3, 4, 5)));
    expect(line).toBe(
      '{"type":"round-start","time":"2025-01-02T03:04:05.000Z","schemaVersion":1,"round":2}\n',
    );
  });
});
