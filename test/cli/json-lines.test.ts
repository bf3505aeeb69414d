import { describe, expect, it } from 'vitest';
import { ModelUnavailableError } from '../../src/index.ts';
import { toJsonLine } from '../../src/cli/json-lines.ts';
import { shippedSchemaValidator } from '../support/json-schema-validator.ts';

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

  it('a run-end or turn-end whose result carries the error that ended it matches the shipped schema', () => {
    const validate = shippedSchemaValidator('json-lines.schema.json');
    const error = {
      code: 'SANDBOX_FAILURE',
      message: 'The container is gone.',
      fix: 'Run `datalyst doctor`.',
      fault: 'system' as const,
      cause: 'no such container',
    };
    const ending = {
      answer: null,
      termination: { reason: 'sandbox-failure' as const, detail: 'The container is gone.' },
      error,
      rounds: 1,
      usage: { promptTokens: 0, completionTokens: 0 },
      durationMs: 5,
    };
    const runEnd = toJsonLine({
      type: 'run-end',
      result: { runId: 'r', outDir: '/runs/r', tracePath: '/runs/r/trace.jsonl', ...ending },
    });
    expect(JSON.parse(runEnd)).toMatchObject({ result: { error } });
    expect(validate(JSON.parse(runEnd))).toEqual([]);
    const turnEnd = toJsonLine({
      type: 'turn-end',
      result: { turn: 1, question: 'q', ask: null, outputIds: [], artifacts: [], ...ending },
    });
    expect(validate(JSON.parse(turnEnd))).toEqual([]);
  });

  it('begin with type, time (ISO 8601) and schemaVersion, in that order', () => {
    const line = toJsonLine({ type: 'round-start', round: 2 }, new Date(Date.UTC(2025, 0, 2, 3, 4, 5)));
    expect(line).toBe(
      '{"type":"round-start","time":"2025-01-02T03:04:05.000Z","schemaVersion":1,"round":2}\n',
    );
  });
});
