import { describe, expect, it } from 'vitest';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { collectArtifacts } from '../../src/agent/artifacts.ts';
import { compactConversation, type ConversationEntry } from '../../src/agent/context-compaction.ts';
import { TokenCalibration, estimateTokens } from '../../src/agent/context-budget.ts';
import { capMiddle, formatExecuteText } from '../../src/agent/execute-text.ts';
import {
  defaultFirstMessageLimits,
  formatFirstMessage,
  parseDataSection,
} from '../../src/agent/first-message.ts';
import type { WorkspaceProfile } from '../../src/sandbox/workspace-profile.ts';
import { chatProfile, deepAnalyzeProfile, executeMessages } from '../../src/agent/model-profile.ts';
import { parseRetryAfterMs, retryDelayMs } from '../../src/agent/retry-policy.ts';
import {
  answered,
  defaultStopConditions,
  firstStop,
  roundCountIs,
  type LoopState,
  type StopCondition,
} from '../../src/agent/stop-conditions.ts';
import { cellResult, createFakeSandbox } from './support/fake-session.ts';
import { csvReadOptions } from '../support/read-options.ts';

const baseState: LoopState = {
  round: 1,
  answer: null,
  elapsedMs: 10,
  deadlineMs: null,
  contextTokens: 100,
  contextBudgetTokens: 1000,
  finalAnswerRequestedAtRound: null,
  stalledTurns: 0,
  repeatedFailures: 0,
  failure: null,
};
const defaults = defaultStopConditions({ maxRounds: 30, maxStalledTurns: 3, maxRepeatedFailures: 3 });

describe('stop conditions', () => {
  it('go on while nothing fires', () => {
    expect(firstStop(defaults, baseState)).toBeNull();
  });

  it('name each reason', () => {
    const reasonFor = (state: Partial<LoopState>) => firstStop(defaults, { ...baseState, ...state })?.reason;
    expect(reasonFor({ answer: 'x' })).toBe('answered');
    expect(reasonFor({ answer: 'x', finalAnswerRequestedAtRound: 0 })).toBe('context-budget');
    expect(reasonFor({ round: 30 })).toBe('max-rounds');
    expect(reasonFor({ deadlineMs: 5 })).toBe('deadline');
    expect(reasonFor({ stalledTurns: 3 })).toBe('no-progress');
    expect(reasonFor({ repeatedFailures: 3 })).toBe('repeated-failure');
    expect(reasonFor({ finalAnswerRequestedAtRound: 0 })).toBe('context-budget');
    expect(reasonFor({ finalAnswerRequestedAtRound: 1 })).toBeUndefined();
  });

  it('combine: the first that fires wins, and custom ones can be added', () => {
    const costLimit: StopCondition = (state) =>
      state.round >= 2 ? { reason: 'max-rounds', detail: 'custom limit' } : null;
    expect(firstStop([answered(), costLimit], { ...baseState, round: 2 })).toEqual({
      reason: 'max-rounds',
      detail: 'custom limit',
    });
    expect(firstStop([answered(), roundCountIs(5)], { ...baseState, round: 2, answer: 'a' })?.reason).toBe(
      'answered',
    );
  });
});

describe('execute text', () => {
  it('keeps short output as it is', () => {
    expect(capMiddle('abc', 10)).toBe('abc');
  });

  it('keeps head and tail of long output with a marker saying how much was cut', () => {
    const text = Array.from({ length: 500 }, (_, line) => `row ${line}`).join('\n');
    const capped = capMiddle(text, 600);
    expect(capped.length).toBeLessThanOrEqual(600);
    expect(capped.startsWith('row 0\n')).toBe(true);
    expect(capped.endsWith('row 499')).toBe(true);
    const omitted = Number(/\[… (\d+) characters of output omitted …\]/.exec(capped)?.[1]);
    expect(omitted).toBeGreaterThan(0);
  });

  it('names the files a cell wrote, and says when the kernel state was lost', () => {
    const text = formatExecuteText(
      cellResult({
        stdout: { text: 'ok\n', truncated: false, totalBytes: 3 },
        files: [
          { path: 'a.csv', change: 'created', sizeBytes: 2048 },
          { path: 'b.png', change: 'modified', sizeBytes: 10 },
        ],
        stateLost: true,
      }),
    );
    expect(text).toContain('ok\n');
    expect(text).toContain('a.csv (created, 2.0 KB), b.png (modified, 10 B)');
    expect(text).toContain('variables and imports are gone');
  });
});

describe('execute text bounds', () => {
  it('is bounded however long the output, the error and the paths of many written files are', () => {
    const huge = 'x'.repeat(200_000);
    const text = formatExecuteText(
      cellResult({
        status: 'error',
        stdout: { text: huge, truncated: false, totalBytes: huge.length },
        stderr: { text: huge, truncated: false, totalBytes: huge.length },
        value: huge,
        error: { name: 'ValueError', value: huge, traceback: huge },
        statusDetail: 'd'.repeat(4000),
        files: Array.from({ length: 100 }, (_, index) => ({
          path: `${'p'.repeat(16_000)}${index}.csv`,
          change: 'created' as const,
          sizeBytes: 1,
        })),
      }),
    );
    // 12 000 characters of output and 20 paths of at most 200 characters, with their notes.
    expect(text.length).toBeLessThan(12_000 + 20 * 230 + 200);
    expect(text).toContain('and 80 more');
  });
});

describe('first message bounds', () => {
  const wideTable = (name: string) => ({
    name: '',
    rows: 10,
    columnsTruncated: false,
    loadCode: `pd.read_csv('${name}')`,
    read: csvReadOptions(),
    columns: Array.from({ length: 40 }, (_, index) => ({
      name: `${'column '.repeat(20)}${index}`,
      dtype: 'object',
      kind: 'text' as const,
      missing: 0,
      unique: 10,
      samples: ['s'.repeat(40), 't'.repeat(40), 'u'.repeat(40)],
      min: null,
      max: null,
    })),
  });
  const workspace = (files: number): WorkspaceProfile => ({
    truncated: false,
    files: Array.from({ length: files }, (_, index) => ({
      path: `file-${index + 1}.csv`,
      sizeBytes: 1000,
      format: 'csv' as const,
      error: null,
      notes: [],
      tables: [wideTable(`file-${index + 1}.csv`)],
    })),
  });

  it('profiles files while they fit in maxDataChars and lists the rest by name and size', () => {
    const message = formatFirstMessage('Summarise.', workspace(30));
    const entries = parseDataSection(message);
    expect(entries).toHaveLength(30);
    const profiled = entries.filter((entry) => entry.tables !== undefined);
    expect(profiled.length).toBeGreaterThan(0);
    expect(profiled.length).toBeLessThan(30);
    expect(entries.slice(profiled.length).every((entry) => entry.tables === undefined)).toBe(true);
    expect(message.length).toBeLessThan(defaultFirstMessageLimits.maxDataChars + 30 * 100);
  });

  it('lists at most maxListedFiles files and says how many more there are', () => {
    const message = formatFirstMessage('Summarise.', workspace(250), {
      ...defaultFirstMessageLimits,
      maxListedFiles: 200,
    });
    expect(parseDataSection(message)).toHaveLength(200);
    expect(message.endsWith('\n(50 more files not listed)')).toBe(true);
  });
});

describe('profiles', () => {
  it('send results bare in role execute for DeepAnalyze, wrapped in a user message for chat models', () => {
    expect(executeMessages(deepAnalyzeProfile, ['1', '2'])).toEqual([
      { role: 'execute', content: '1' },
      { role: 'execute', content: '2' },
    ]);
    expect(executeMessages(chatProfile, ['1', '2'])).toEqual([
      { role: 'user', content: '<Execute>\n1\n</Execute>\n<Execute>\n2\n</Execute>' },
    ]);
    expect(deepAnalyzeProfile.systemPrompt).toBeNull();
    expect(chatProfile.systemPrompt).toContain('<Code>');
  });
});

describe('context compaction', () => {
  it('shortens older execution results first and never touches code or reasoning', () => {
    const entries: ConversationEntry[] = [
      { kind: 'first', message: { role: 'user', content: 'F'.repeat(5000) } },
      { kind: 'assistant', message: { role: 'assistant', content: 'A'.repeat(5000) } },
      { kind: 'execute', message: { role: 'user', content: 'old '.repeat(2000) } },
      { kind: 'assistant', message: { role: 'assistant', content: 'B'.repeat(5000) } },
      { kind: 'execute', message: { role: 'user', content: 'new '.repeat(2000) } },
    ];
    const result = compactConversation(entries, {
      keepRecent: 1,
      maxCharsPerOldResult: 500,
      charsToSave: 100_000,
    });
    expect(result.shortened).toBe(1);
    expect(entries[2]?.message.content.length).toBeLessThanOrEqual(500);
    expect(entries[4]?.message.content).toBe('new '.repeat(2000));
    expect(entries[0]?.message.content).toHaveLength(5000);
    expect(entries[1]?.message.content).toHaveLength(5000);
  });

  it('calibrates token estimates with what the endpoint counted', () => {
    const messages = [{ role: 'user' as const, content: 'x'.repeat(3500) }];
    const calibration = new TokenCalibration();
    expect(calibration.tokens(messages)).toBe(estimateTokens('x'.repeat(3500)) + 4);
    calibration.observe(1004, 2008);
    expect(calibration.tokens(messages)).toBe(2008);
  });
});

describe('retry policy', () => {
  it('reads Retry-After in seconds, as a date, and retry-after-ms', () => {
    expect(parseRetryAfterMs(new Headers({ 'retry-after': '2' }))).toBe(2000);
    expect(parseRetryAfterMs(new Headers({ 'retry-after-ms': '150' }))).toBe(150);
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(parseRetryAfterMs(new Headers({ 'retry-after': 'Wed, 01 Jan 2025 00:00:05 GMT' }), now)).toBe(
      5000,
    );
    expect(parseRetryAfterMs(new Headers({ 'retry-after': 'soon' }))).toBeNull();
    expect(parseRetryAfterMs(new Headers())).toBeNull();
  });

  it('backs off exponentially and never waits longer than the cap', () => {
    const policy = { maxRetries: 5, initialDelayMs: 100, maxDelayMs: 1000 };
    expect(retryDelayMs(policy, 1, null)).toBeGreaterThanOrEqual(75);
    expect(retryDelayMs(policy, 1, null)).toBeLessThanOrEqual(125);
    expect(retryDelayMs(policy, 3, null)).toBeGreaterThanOrEqual(300);
    expect(retryDelayMs(policy, 10, null)).toBe(1000);
    expect(retryDelayMs(policy, 1, 60_000)).toBe(1000);
  });
});

describe('artifact paths', () => {
  it("follow the sandbox's one rule: a/../b, ./a, absolute and parent paths are refused, never normalised", async () => {
    const bytes = new TextEncoder().encode('x');
    const paths = ['out/chart.png', './a.csv', 'a/../b.csv', '../etc/passwd', '/etc/passwd', 'a//b', 'a\\b'];
    const sandbox = createFakeSandbox({ files: new Map(paths.map((file) => [file, bytes])) });
    const session = await sandbox.factory({});
    const runDir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-artifacts-'));
    try {
      const collection = await collectArtifacts(
        session,
        paths.map((file) => ({ path: file, change: 'created' as const, sizeBytes: 1 })),
        runDir,
        { remainingBytes: 1000, remainingFiles: 10 },
      );
      expect(collection.saved.map((file) => file.path)).toEqual(['out/chart.png']);
      expect(collection.skipped.map((file) => file.path)).toEqual(paths.slice(1));
      expect(await readdir(path.join(runDir, 'artifacts'), { recursive: true })).toEqual(
        expect.arrayContaining(['out', path.join('out', 'chart.png')]),
      );
      expect(await readdir(runDir)).toEqual(['artifacts']);
    } finally {
      await rm(runDir, { recursive: true, force: true });
    }
  });
});
