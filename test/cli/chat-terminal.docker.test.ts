import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { readTrace } from '../../src/trace/reader.ts';
import { splitTurns } from '../../src/trace/turns.ts';

/**
 * `datalyst chat` as a person uses it: in a real terminal (a tmux pane, so
 * readline runs in terminal mode with line editing), the real Docker sandbox
 * and the offline analyst, through two questions and /exit.
 */

const projectRoot = path.resolve(import.meta.dirname, '../..');
const bin = path.join(projectRoot, 'bin', 'datalyst.js');
const session = `datalyst-chat-test-${process.pid}`;
const temporary: string[] = [];

const tmuxFound = await execa('tmux', ['-V'], { reject: false }).then((result) => result.exitCode === 0);
if (!tmuxFound && process.env.CI === 'true') {
  throw new Error('tmux is missing: the chat terminal test needs it (apt-get install tmux).');
}

async function tmux(...args: string[]): Promise<string> {
  return (await execa('tmux', args)).stdout;
}

const pane = () => tmux('capture-pane', '-p', '-J', '-S', '-2000', '-t', session);

/** Waits until the pane holds `pattern` `count` times. */
async function waitFor(pattern: RegExp, count = 1, timeoutMs = 120_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = await pane();
    const matches = text.match(new RegExp(pattern.source, 'g')) ?? [];
    if (matches.length >= count) return text;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${pattern} ×${count}; the pane:\n${text}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

afterAll(async () => {
  await execa('tmux', ['kill-session', '-t', session], { reject: false });
  await Promise.all(temporary.map((dir) => rm(dir, { recursive: true, force: true })));
});

describe.skipIf(!tmuxFound)('datalyst chat in a terminal', () => {
  it('answers two questions in one sandbox, then /exit writes the report', async () => {
    const workspace = await mkdtemp(path.join(os.tmpdir(), 'datalyst-chat-ws-'));
    const runs = await mkdtemp(path.join(os.tmpdir(), 'datalyst-chat-runs-'));
    temporary.push(workspace, runs);
    const rows = Array.from({ length: 40 }, (_, index) =>
      [
        `2024-01-${String((index % 28) + 1).padStart(2, '0')}`,
        ['North', 'South', 'East'][index % 3],
        10 + index,
        (index % 5) + 1,
      ].join(','),
    );
    await writeFile(
      path.join(workspace, 'sales.csv'),
      ['date,region,revenue,units', ...rows].join('\n') + '\n',
    );
    const outDir = path.join(runs, 'chat');
    const command = [process.execPath, bin, 'chat', workspace, '--offline', '--out', outDir]
      .map((part) => `'${part.replace(/'/g, "'\\''")}'`)
      .join(' ');
    await tmux(
      'new-session',
      '-d',
      '-s',
      session,
      '-x',
      '160',
      '-y',
      '50',
      '-e',
      'NO_COLOR=1',
      '-e',
      'DATALYST_MODEL=',
      '-e',
      'OPENAI_API_KEY=',
      `${command}; echo "CHAT-EXIT=$?"; sleep 600`,
    );
    await waitFor(/datalyst> /);
    // Line editing: a typo fixed with Backspace before Enter.
    await tmux('send-keys', '-t', session, '-l', 'Give me an overviewx');
    await tmux('send-keys', '-t', session, 'BSpace', 'Enter');
    await waitFor(/✓ Answered/, 1, 150_000);
    await waitFor(/datalyst> /, 2);
    // History: Up brings the last question back; it is cleared and a follow-up typed instead.
    await tmux('send-keys', '-t', session, 'Up');
    await waitFor(/datalyst> Give me an overview\s*$/m);
    await tmux('send-keys', '-t', session, 'C-u');
    await tmux('send-keys', '-t', session, '-l', 'And the revenue by region?');
    await tmux('send-keys', '-t', session, 'Enter');
    const afterSecond = await waitFor(/✓ Answered/, 2);
    expect(afterSecond).toContain('Question 2: And the revenue by region?');
    expect(afterSecond).toMatch(/About `revenue`, `region`/);
    await waitFor(/datalyst> /, 3);
    await tmux('send-keys', '-t', session, '-l', '/exit');
    await tmux('send-keys', '-t', session, 'Enter');
    const end = await waitFor(/CHAT-EXIT=\d+/);
    expect(end).toContain('Session ended after 2 questions.');
    expect(end).toContain('CHAT-EXIT=0');
    expect(end).toMatch(/Report: .*report\.html/);

    const trace = await readTrace(path.join(outDir, 'trace.jsonl'));
    expect(trace.partial).toBe(false);
    const turns = splitTurns(trace.records);
    expect(turns.map((turn) => [turn.question, turn.end?.termination.reason])).toEqual([
      ['Give me an overview', 'answered'],
      ['And the revenue by region?', 'answered'],
    ]);
    const html = await readFile(path.join(outDir, 'report.html'), 'utf8');
    expect(html).toContain('<h2>Conversation</h2>');
    expect((await stat(path.join(outDir, 'analysis.ipynb'))).size).toBeGreaterThan(0);

    // A script adds a question later: the thread resumes in a fresh sandbox (cells replayed) and the report is rewritten.
    const continued = await execa(
      process.execPath,
      [bin, 'analyze', '--continue', outDir, 'And the units by region?', '--offline'],
      {
        cwd: projectRoot,
        env: { NO_COLOR: '1', DATALYST_MODEL: '', OPENAI_API_KEY: '' },
        reject: false,
        all: true,
      },
    );
    expect(continued.exitCode, continued.all).toBe(0);
    expect(continued.all).toMatch(/Replayed \d+ cells in .*: outputs match the record\./);
    expect(continued.all).toContain('✓ Answered (question 3)');
    const after = await readTrace(path.join(outDir, 'trace.jsonl'));
    expect(splitTurns(after.records).map((turn) => turn.question)).toEqual([
      'Give me an overview',
      'And the revenue by region?',
      'And the units by region?',
    ]);
    expect(await readFile(path.join(outDir, 'report.html'), 'utf8')).toContain('And the units by region?');
  });
});
