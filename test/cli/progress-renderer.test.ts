import { afterEach, describe, expect, it, vi } from 'vitest';
import type {
  AgentEvent,
  AnalysisResult,
  CellResult,
  RerunResult,
  WorkspaceProfile,
} from '../../src/index.ts';
import { ModelUnavailableError } from '../../src/index.ts';
import { ProgressRenderer, type ProgressRendererOptions } from '../../src/cli/progress-renderer.ts';
import { cellResult } from '../support/cell-result.ts';
import { csvReadOptions } from '../support/read-options.ts';

afterEach(() => {
  vi.useRealTimers();
});

const cell = (overrides: Partial<CellResult> = {}): CellResult =>
  cellResult({ durationMs: 1234, ...overrides });

const profile: WorkspaceProfile = {
  truncated: false,
  files: [
    {
      path: 'orders.csv',
      sizeBytes: 2048,
      format: 'csv',
      tables: [
        {
          name: '',
          rows: 1200,
          columns: [],
          columnsTruncated: false,
          read: csvReadOptions(),
          loadCode: "pd.read_csv('orders.csv')",
        },
      ],
      error: null,
      notes: [],
    },
    {
      path: 'broken.xlsx',
      sizeBytes: 10,
      format: 'excel',
      tables: [],
      error: 'File is not a zip file',
      notes: [],
    },
    { path: 'slides.pdf', sizeBytes: 5, format: 'unsupported', tables: [], error: null, notes: [] },
  ],
};

const result: AnalysisResult = {
  runId: 'r1',
  outDir: '/runs/r1',
  tracePath: '/runs/r1/trace.jsonl',
  answer: '## Result',
  termination: { reason: 'answered', detail: 'The model answered.' },
  rounds: 2,
  usage: { promptTokens: 0, completionTokens: 0 },
  durationMs: 4200,
};

/** A short run as the loop streams it: text arrives in chunks that split lines and tags' text. */
const run: AgentEvent[] = [
  {
    type: 'run-start',
    runId: 'r1',
    outDir: '/runs/r1',
    instruction: 'Describe the orders.',
    modelId: 'datalyst-offline-analyst',
  },
  { type: 'profile-end', profile },
  { type: 'round-start', round: 1 },
  { type: 'text-delta', round: 1, tag: 'analyze', text: '\nLook at the ' },
  { type: 'text-delta', round: 1, tag: 'analyze', text: 'orders.\nThen plot.\n' },
  { type: 'step-end', round: 1, kind: 'analyze', text: 'Look at the orders.\nThen plot.', closed: true },
  { type: 'text-delta', round: 1, tag: 'code', text: 'import pandas as pd\n' },
  { type: 'text-delta', round: 1, tag: 'code', text: "orders = pd.read_csv('orders.csv')" },
  {
    type: 'step-end',
    round: 1,
    kind: 'code',
    text: "import pandas as pd\norders = pd.read_csv('orders.csv')",
    closed: true,
  },
  { type: 'code-end', round: 1, code: "import pandas as pd\norders = pd.read_csv('orders.csv')" },
  { type: 'execution-start', round: 1, outputId: 'E1', code: '...' },
  { type: 'artifact-saved', outputId: 'E1', path: 'plot.png', sizeBytes: 1024 },
  {
    type: 'execution-end',
    round: 1,
    outputId: 'E1',
    result: cell({
      stdout: { text: '1200 rows\n8 columns\n', truncated: false, totalBytes: 20 },
      figures: [{ id: 'f1', mimeType: 'image/png', dataBase64: 'AAAA', widthPx: 10, heightPx: 10 }],
      tables: [
        {
          id: 't1',
          columns: ['a'],
          index: ['0'],
          rows: [[1]],
          totalRows: 1,
          totalColumns: 1,
          truncated: false,
        },
      ],
    }),
  },
  { type: 'round-start', round: 2 },
  { type: 'text-delta', round: 2, tag: 'answer', text: '## Result' },
  { type: 'step-end', round: 2, kind: 'answer', text: '## Result', closed: true },
  { type: 'answer-end', round: 2, answer: '## Result' },
  { type: 'run-end', result },
];

function render(events: readonly AgentEvent[], options: Partial<ProgressRendererOptions> = {}): string {
  let output = '';
  const renderer = new ProgressRenderer({
    write: (text) => (output += text),
    live: false,
    color: false,
    quiet: false,
    now: () => 0,
    tickMs: 0,
    ...options,
  });
  for (const event of events) renderer.handle(event);
  renderer.close();
  return output;
}

describe('progress renderer, plain (logs, pipes)', () => {
  it('prints whole steps with their tag in front of every line, and no escape codes', () => {
    const output = render(run);
    expect(output).toContain('[round 1]\n');
    expect(output).toContain('analyze   | Look at the orders.\n          | Then plot.\n');
    expect(output).toContain(
      "code      | import pandas as pd\n          | orders = pd.read_csv('orders.csv')\n",
    );
    expect(output).toContain('  E1 running…\n');
    expect(output).toContain('  + plot.png (1.0 KB)\n');
    expect(output).toContain('  ✓ E1 ok · 1.2 s · 1 figure · 1 table\n    ┆ 1200 rows\n    ┆ 8 columns\n');
    expect(output).toContain('answer    | ## Result\n');
    expect(output).toContain('✓ Answered in 2 rounds · 4.2 s\n');
    // The answer is printed once, although both step-end and answer-end carry it.
    expect(output.match(/## Result/g)).toHaveLength(1);
    expect(output).not.toContain('\x1b');
  });

  it('shows the workspace profile: unreadable files as warnings, unsupported ones as skipped', () => {
    const output = render(run.slice(0, 2));
    // Counted as the workspace check counts data files; the unsupported one said apart.
    expect(output).toContain('Workspace profiled: 3 files (2 data files, 1 unsupported), 1 table\n');
    expect(output).toContain('  orders.csv csv · 2.0 KB · 1200×0\n');
    expect(output).toContain(
      '! broken.xlsx: could not be read (File is not a zip file); the other files are still analysed\n',
    );
    expect(output).toContain('  - slides.pdf: unsupported type, skipped\n');
  });

  it('says the other files are analysed only when one gave a table, and keeps a file name on its line', () => {
    const broken = profile.files[1];
    if (broken === undefined) throw new Error('fixture');
    const forged = { ...broken, path: 'x.xlsx\n✓ Answered in 1 round', error: 'File is not a zip file.\nok' };
    const output = render([{ type: 'profile-end', profile: { truncated: false, files: [forged] } }]);
    expect(output).toContain(
      '! x.xlsx\\n✓ Answered in 1 round: could not be read (File is not a zip file.\\nok)\n',
    );
    expect(output).not.toContain('still analysed');
    expect(output.split('\n').some((line) => line.startsWith('✓'))).toBe(false);
  });

  it('names failed cells, lost state and the reason a run stopped', () => {
    const output = render([
      { type: 'execution-start', round: 3, outputId: 'E3', code: 'x' },
      {
        type: 'execution-end',
        round: 3,
        outputId: 'E3',
        result: cell({ status: 'error', error: { name: 'KeyError', value: "'region'", traceback: '' } }),
      },
      { type: 'execution-start', round: 4, outputId: 'E4', code: 'x' },
      {
        type: 'execution-end',
        round: 4,
        outputId: 'E4',
        result: cell({ status: 'timeout', statusDetail: 'The cell ran longer than 120 s.', stateLost: true }),
      },
      { type: 'notice', round: 4, kind: 'nudge', text: 'The same code failed again.' },
      {
        type: 'error',
        error: new ModelUnavailableError('The model did not answer.', { fix: 'Start the server.' }),
      },
      {
        type: 'run-end',
        result: { ...result, termination: { reason: 'max-rounds', detail: 'Stopped after 30 rounds.' } },
      },
    ]);
    expect(output).toContain("  ✗ E3 error · 1.2 s\n    KeyError: 'region'\n");
    expect(output).toContain(
      '  ✗ E4 timeout · 1.2 s\n    The cell ran longer than 120 s.\n    the kernel was restarted: variables and imports are gone\n',
    );
    expect(output).toContain('! nudge: The same code failed again.\n');
    expect(output).toContain('✗ MODEL_UNAVAILABLE The model did not answer.\n  fix: Start the server.\n');
    expect(output).toContain(
      '✗ Stopped without an answer (max-rounds) after 2 rounds · 4.2 s\n  Stopped after 30 rounds.\n',
    );
  });

  it('a re-run whose --rewrite-answer model failed shows the carried-over answer: the end line does not say "without an answer"', () => {
    const rerun: RerunResult = {
      ...result,
      answer: '> **Re-run** … with no model.\n\nIn all, 812 orders.',
      termination: { reason: 'model-unavailable', detail: 'The model failed: 503 overloaded' },
      rounds: 0,
      rerunOf: { runId: 'r0', runDir: '/runs/r0', traceSha256: 'ab' },
      cells: [],
      failedCell: null,
      answerSource: 'carried-over',
      numbers: [],
    };
    const output = render([
      { type: 'answer-end', round: 1, answer: rerun.answer ?? '' },
      { type: 'run-end', result: rerun },
    ]);
    expect(output).not.toContain('without an answer');
    expect(output).toContain('✗ Stopped (model-unavailable) after 0 rounds');
    expect(output).toContain(
      "The model's rewrite of the answer failed: the answer shown is the earlier one, with its numbers carried over to the new outputs.",
    );
    expect(output).toContain('The model failed: 503 overloaded');
    // A re-run stopped by a failed cell keeps the carried-over answer too, and says so.
    const cellFailed = render([
      {
        type: 'run-end',
        result: {
          ...rerun,
          termination: { reason: 'rerun-cell-failed', detail: 'E2 failed on the new data.' },
        },
      },
    ]);
    expect(cellFailed).toContain('✗ Stopped (rerun-cell-failed)');
    expect(cellFailed).toContain('The answer shown is the earlier one, with its numbers carried over');
    // A plain run that stopped with no answer says so as before (what `analyze` prints is unchanged).
    const analyze = render([
      {
        type: 'run-end',
        result: { ...result, answer: null, termination: { reason: 'model-unavailable', detail: 'down' } },
      },
    ]);
    expect(analyze).toContain('✗ Stopped without an answer (model-unavailable) after 2 rounds');
    expect(analyze).not.toContain('carried over');
  });

  it('says when the model reply broke off and the turn starts over', () => {
    const output = render(
      [
        { type: 'text-delta', round: 2, tag: 'analyze', text: 'Half a tho' },
        { type: 'turn-restart', round: 2, reason: 'connection reset' },
        { type: 'text-delta', round: 2, tag: 'analyze', text: 'A whole thought.' },
        { type: 'step-end', round: 2, kind: 'analyze', text: 'A whole thought.', closed: true },
      ],
      { live: true },
    );
    expect(screen(output)).toBe(
      "analyze   │ Half a tho\n! The model's reply broke off (connection reset); the turn starts over and the text above is void.\nanalyze   │ A whole thought.\n",
    );
  });

  it('prints only warnings, errors and the closing line when quiet', () => {
    const output = render(run, { quiet: true });
    expect(output).toBe(
      '! broken.xlsx: could not be read (File is not a zip file); the other files are still analysed\n✓ Answered in 2 rounds · 4.2 s\n',
    );
  });
});

/** What a terminal would show: apply carriage returns and line clears. */
function screen(output: string): string {
  const lines: string[] = [''];
  // eslint-disable-next-line no-control-regex -- the terminal's own line-clear sequence
  for (const piece of output.split(/(\r\x1b\[2K|\n)/)) {
    if (piece === '\n') lines.push('');
    else if (piece === '\r\x1b[2K') lines[lines.length - 1] = '';
    else lines[lines.length - 1] += piece;
  }
  return lines.join('\n');
}

describe('progress renderer, long code', () => {
  const code = Array.from({ length: 40 }, (_, index) => `x${index} = ${index}`).join('\n');

  it('shows the first lines of a long code step and counts the rest, in both modes', () => {
    const events: AgentEvent[] = [
      // Chunks of 7 characters: the cap must hold while lines arrive in pieces.
      ...(code.match(/[\s\S]{1,7}/g) ?? []).map((text): AgentEvent => ({
        type: 'text-delta',
        round: 1,
        tag: 'code',
        text,
      })),
      { type: 'step-end', round: 1, kind: 'code', text: code, closed: true },
      { type: 'text-delta', round: 1, tag: 'analyze', text: 'Next.' },
      { type: 'step-end', round: 1, kind: 'analyze', text: 'Next.', closed: true },
    ];
    for (const live of [false, true]) {
      const output = render(events, { live, maxCodeLines: 3 });
      const bar = live ? '│' : '|';
      expect(output).toBe(
        `code      ${bar} x0 = 0\n          ${bar} x1 = 1\n          ${bar} x2 = 2\n          ${bar} … 37 more lines (the report has the full code)\nanalyze   ${bar} Next.\n`,
      );
    }
  });
});

describe('progress renderer, live (a terminal)', () => {
  it('streams model text behind a gutter that names the tag once per step', () => {
    const output = render(run, { live: true });
    const shown = screen(output);
    expect(shown).toContain('── round 1 ──');
    expect(shown).toContain(
      'analyze   │ Look at the orders.\n          │ Then plot.\ncode      │ import pandas as pd\n',
    );
    expect(shown).toContain('  ✓ E1 ok · 1.2 s · 1 figure · 1 table\n');
    expect(shown).toContain('answer    │ ## Result\n');
    expect(shown.match(/## Result/g)).toHaveLength(1);
  });

  it('shows the running cell with its elapsed time, redrawn in place, and keeps other lines above it', () => {
    vi.useFakeTimers();
    let clock = 0;
    let output = '';
    const renderer = new ProgressRenderer({
      write: (text) => (output += text),
      live: true,
      color: false,
      quiet: false,
      now: () => clock,
      tickMs: 250,
    });
    renderer.handle({ type: 'execution-start', round: 1, outputId: 'E1', code: 'x' });
    expect(screen(output)).toBe('  ⏵ E1 running · 0 ms');
    clock = 4200;
    vi.advanceTimersByTime(250);
    expect(screen(output)).toBe('  ⏵ E1 running · 4.2 s');
    renderer.handle({ type: 'artifact-saved', outputId: 'E1', path: 'out.csv', sizeBytes: 10 });
    expect(screen(output)).toBe('  + out.csv (10 B)\n  ⏵ E1 running · 4.2 s');
    clock = 65_000;
    vi.advanceTimersByTime(250);
    expect(screen(output)).toBe('  + out.csv (10 B)\n  ⏵ E1 running · 1 min 5 s');
    renderer.handle({ type: 'execution-end', round: 1, outputId: 'E1', result: cell() });
    expect(screen(output)).toBe('  + out.csv (10 B)\n  ✓ E1 ok · 1.2 s\n');
    // The timer is gone: nothing more is drawn.
    const before = output;
    vi.advanceTimersByTime(2000);
    expect(output).toBe(before);
    renderer.close();
  });

  it('leaves the ``` fence lines of streamed code out, however the chunks fall', () => {
    const reply = '\n```python\nimport pandas as pd\n\nprint(1)\n``' + '`\n';
    const events: AgentEvent[] = [
      ...(reply.match(/[\s\S]{1,3}/g) ?? []).map((text): AgentEvent => ({
        type: 'text-delta',
        round: 1,
        tag: 'code',
        text,
      })),
      { type: 'step-end', round: 1, kind: 'code', text: 'import pandas as pd\n\nprint(1)', closed: true },
    ];
    expect(screen(render(events, { live: true }))).toBe(
      'code      │ import pandas as pd\n          │ \n          │ print(1)\n',
    );
  });

  it('colours tags when colours are on', () => {
    const output = render(run, { live: true, color: true });
    expect(output).toContain('\x1b[34manalyze   \x1b[39m');
    expect(output).toContain('\x1b[36mcode      \x1b[39m');
  });

  it('prints model text and cell output without escape sequences or control characters', () => {
    const hostile = 'Fine\x1b]0;owned\x07 text\x1b[2J\x1b[1;1H and\x08 more\r\nnext';
    const events: AgentEvent[] = [
      { type: 'text-delta', round: 1, tag: 'analyze', text: hostile },
      { type: 'step-end', round: 1, kind: 'analyze', text: hostile, closed: true },
      { type: 'execution-start', round: 1, outputId: 'E1', code: '' },
      {
        type: 'execution-end',
        round: 1,
        outputId: 'E1',
        result: cell({ stdout: { text: hostile, truncated: false, totalBytes: 10 } }),
      },
      { type: 'artifact-saved', outputId: 'E1', path: 'a\x1b[31m.csv', sizeBytes: 1 },
    ];
    for (const live of [true, false]) {
      const output = render(events, { live });
      const withoutOwnCodes = output.replaceAll('\r\x1b[2K', '');
      // eslint-disable-next-line no-control-regex -- looking for control characters is the test
      expect(withoutOwnCodes).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f]/);
      expect(withoutOwnCodes).toContain('Fine text and more');
    }
  });
});

/** A terminal of lines that understands line clears and the cursor moving up a line. */
function terminalScreen(output: string): string {
  const lines: string[] = [''];
  // eslint-disable-next-line no-control-regex -- the terminal's own sequences
  for (const piece of output.split(/(\r\x1b\[2K|\x1b\[1A\x1b\[2K|\n)/)) {
    if (piece === '\n') lines.push('');
    else if (piece === '\r\x1b[2K') lines[lines.length - 1] = '';
    else if (piece === '\x1b[1A\x1b[2K') {
      lines.pop();
      lines[lines.length - 1] = '';
    } else lines[lines.length - 1] += piece;
  }
  return lines.join('\n');
}

describe('progress renderer, conversations and live cell output', () => {
  const turnResult = {
    turn: 2,
    question: 'And by month?',
    answer: 'March.',
    ask: null,
    termination: { reason: 'answered' as const, detail: 'The model answered in round 1.' },
    rounds: 1,
    usage: { promptTokens: 0, completionTokens: 0 },
    durationMs: 1500,
    outputIds: ['E4'],
    artifacts: [],
  };

  it('shows the last lines a running cell printed under its status line, and clears them when it ends', () => {
    const running: AgentEvent[] = [
      { type: 'execution-start', round: 1, outputId: 'E1', code: 'loop()' },
      ...[1, 2, 3, 4, 5].map((index): AgentEvent => ({
        type: 'execution-output',
        round: 1,
        outputId: 'E1',
        stream: 'stdout',
        text: `tick ${index}\n`,
      })),
    ];
    let shown = '';
    const open = new ProgressRenderer({
      write: (text) => (shown += text),
      live: true,
      color: false,
      quiet: false,
      now: () => 0,
      tickMs: 0,
    });
    for (const event of running) open.handle(event);
    const during = terminalScreen(shown);
    open.close();
    expect(during).not.toContain('tick 2');
    expect(during).toContain('    ┆ tick 3\n    ┆ tick 4\n    ┆ tick 5\n  ⏵ E1 running');
    const after = terminalScreen(
      render(
        [
          ...running,
          {
            type: 'execution-end',
            round: 1,
            outputId: 'E1',
            result: cell({ stdout: { text: 'tick 1\n', truncated: false, totalBytes: 7 } }),
          },
        ],
        { live: true },
      ),
    );
    expect(after).not.toContain('tick 5');
    expect(after).toContain('✓ E1 ok');
  });

  it('names each later question, counts rounds per question, and closes each turn in a chat', () => {
    const output = render(
      [
        { type: 'turn-start', turn: 2, question: 'And by month?', replyToAsk: false },
        { type: 'round-start', round: 14 },
        { type: 'ask', round: 14, question: 'Which year?', reply: null },
        { type: 'turn-end', result: turnResult },
      ],
      { threaded: true, maxRounds: 30 },
    );
    expect(output).toContain('Question 2: And by month?\n');
    expect(output).toContain('[round 1/30]\n');
    expect(output).toContain('? The model asks: Which year?\n');
    expect(output).toContain('✓ Answered in 1 round');
  });

  it('says the offline analyst asks, not a model, and that a turn ending asked waits for the reply (neither answered nor failed)', () => {
    const question = 'Which column or table is this question about?';
    const output = render(
      [
        { type: 'turn-start', turn: 2, question: 'Why did sales fall?', replyToAsk: false },
        { type: 'round-start', round: 14 },
        { type: 'ask', round: 14, question, reply: null },
        {
          type: 'turn-end',
          result: {
            ...turnResult,
            answer: null,
            ask: question,
            termination: { reason: 'asked', detail: 'Asked a question in round 14.' },
          },
        },
      ],
      { threaded: true, offline: true },
    );
    expect(output).toContain(`? The offline analyst asks: ${question}\n`);
    expect(output).toContain('The offline analyst waits for your reply.');
    expect(output).not.toContain('The model');
    expect(output).not.toMatch(/Answered|No answer/);
  });

  it('says a replay that matches the record once, without a warning marker (--continue printed it twice, the second as "! replay:")', () => {
    const replayText =
      'The sandbox was started again and 13 recorded cells replayed in 3641 ms; every output matches the record.';
    const summary = { cells: 13, replayed: 13, mismatches: [], skipped: [], durationMs: 3641 };
    const events: AgentEvent[] = [
      { type: 'replay-start', cells: 13 },
      { type: 'replay-end', summary },
      { type: 'notice', round: 13, kind: 'replay', text: replayText },
    ];
    const output = render(events);
    expect(output).toContain('Replayed 13 cells in 3.6 s: outputs match the record.\n');
    expect(output).not.toContain('every output matches');
    expect(output).not.toContain('!');
    expect(render(events, { quiet: true })).toBe('');
  });

  it('warns once about replayed outputs that differ, naming each, also when quiet', () => {
    const summary = {
      cells: 3,
      replayed: 2,
      mismatches: [{ outputId: 'E2', detail: "printed '41' → '42'" }],
      skipped: [{ outputId: 'E3', detail: 'it ended timeout in the record' }],
      durationMs: 1200,
    };
    const events: AgentEvent[] = [
      { type: 'replay-end', summary },
      { type: 'notice', round: 3, kind: 'replay', text: 'The sandbox was started again and 2 …' },
    ];
    expect(render(events)).toBe(
      '! Replayed 2 cells in 1.2 s: 1 output differs from the record:\n' +
        "  E2: printed '41' → '42'\n" +
        '  Not replayed: E3 (it ended timeout in the record).\n',
    );
    expect(render(events, { quiet: true })).toBe(
      "! Replayed 2 cells in 1.2 s: 1 output differs from the record:\n  E2: printed '41' → '42'\n",
    );
  });

  it('marks only notices that warn with "!"', () => {
    const output = render([
      { type: 'notice', round: 2, kind: 'compaction', text: 'Shortened 3 outputs.' },
      { type: 'notice', round: 2, kind: 'warning', text: 'Code after the answer was not run.' },
    ]);
    expect(output).toBe('compaction: Shortened 3 outputs.\n! warning: Code after the answer was not run.\n');
  });
});
