import {
  apiKey,
  chartPath,
  eventsPath,
  figurePath,
  imageProblem,
  reportFileName,
  reportPath,
  reportWithKeyNote,
  type ReportDownloadFormat,
  showServerImage,
  type AnswerGrounding,
  type Turn,
} from './api.ts';
import { counted, formatBytes, h } from './dom.ts';
import { followEventStream } from './event-stream.ts';
import { arr, num, parseEvent, rec, str, type EventRecord } from './events.ts';
import { answerView } from './answer-markdown.ts';
import { highlightedCode } from './highlight.ts';
import { profileView } from './profile-view.ts';
import { turnOutcome } from './turn-outcome.ts';

const stepLabel: Record<string, string> = {
  analyze: 'Analyze',
  understand: 'Understand',
  code: 'Code',
  answer: 'Answer',
  ask: 'Question to you',
  text: 'Text',
};

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const FIGURE_NAME = /^[A-Za-z0-9_-]{1,64}--[A-Za-z0-9_-]{1,64}$/;

export interface TurnCallbacks {
  /** The turn's stream ended (`turn-done`): how it ended, in words (turn-outcome.ts), and, when the model asked, its question. */
  onDone(view: TurnView, outcome: string, ask: string | null): void;
  /** The server answered 401: the page asks for the API key. */
  onUnauthorized(): void;
}

/** One question of a thread and its live steps, built from its SSE events in order. */
export class TurnView {
  readonly element: HTMLElement;
  private readonly steps = h('ol', { class: 'steps' });
  private readonly statusText = h('span', { class: 'turn-status' });
  private readonly footer = h('div', { class: 'turn-footer' });
  private stepElements = new Map<string, HTMLElement>();
  private cells = new Map<
    string,
    { element: HTMLElement; live: HTMLElement; timer: number; started: number }
  >();
  private following: AbortController | null = null;
  /** The last event drawn: an event is drawn once, whatever a re-attach sends again. */
  private lastSeq = 0;
  private askQuestion: string | null = null;
  /** The server's clock minus ours, when they differ by more than its `Date` header's whole seconds can tell (else 0). */
  private serverClockAheadMs = 0;
  /** The event stream was refused with 401: followed again once the key is entered (`keyChanged`). */
  private waitingForKey = false;
  status: string;

  constructor(
    readonly threadId: string,
    readonly turn: Turn,
    private readonly callbacks: TurnCallbacks,
  ) {
    this.status = turn.status;
    this.statusText.textContent = turn.status;
    this.element = h(
      'article',
      { class: 'turn', 'aria-label': `Question ${turn.index}`, 'data-turn': String(turn.index) },
      h('header', { class: 'question' }, h('h3', {}, turn.question), this.statusText),
      this.steps,
      this.footer,
    );
  }

  /** Follows the turn's events; when the connection drops it re-attaches with Last-Event-ID (see event-stream.ts). */
  follow(): void {
    this.following?.abort();
    const following = new AbortController();
    this.following = following;
    followEventStream(
      eventsPath(this.threadId, this.turn.index),
      {
        onEvent: (data) => {
          const event = parseEvent(data);
          if (event === null) return false;
          const seq = num(event.seq);
          if (seq > 0 && seq <= this.lastSeq) return false;
          if (seq > 0) this.lastSeq = seq;
          this.handle(event);
          return event.type === 'turn-done';
        },
        onServerDate: (serverMs) => {
          const ahead = serverMs - Date.now();
          this.serverClockAheadMs = Math.abs(ahead) > 2000 ? ahead : 0;
        },
        onRetry: (delayMs) => {
          this.element.dataset.reattaching = 'true';
          this.setStatus(`connection lost — reconnecting in ${(delayMs / 1000).toFixed(1)} s…`);
        },
        onFail: (error) => {
          if (error.status === 401) {
            this.waitingForKey = true;
            this.setStatus('waiting for the API key: this turn is followed again once it is entered');
            return;
          }
          this.setStatus(`the server refused this turn's events: ${error.message}`);
        },
      },
      following.signal,
      () => this.callbacks.onUnauthorized(),
      this.lastSeq > 0 ? String(this.lastSeq) : undefined,
    );
  }

  /** A new API key: a stream refused for want of one is followed again (events already drawn are not drawn twice). */
  keyChanged(): void {
    if (!this.waitingForKey) return;
    this.waitingForKey = false;
    this.setStatus('following again…');
    this.follow();
  }

  stop(): void {
    this.following?.abort();
    this.following = null;
    for (const cell of this.cells.values()) window.clearInterval(cell.timer);
  }

  private setStatus(text: string): void {
    this.statusText.textContent = text;
  }

  handle(event: EventRecord): void {
    if (this.element.dataset.reattaching === 'true' && event.type !== 'turn-done') {
      delete this.element.dataset.reattaching;
      this.setStatus(this.status === 'queued' ? 'running' : this.status);
    }
    switch (event.type) {
      case 'turn-queued':
        this.setStatus(`queued (${num(event.position)} ahead)`);
        break;
      case 'turn-running':
        this.setStatus(
          event.resumed === true ? 'running — sandbox reopened, earlier cells replayed' : 'running',
        );
        break;
      case 'profile-end':
        this.steps.append(
          h('li', { class: 'step step-profile' }, h('h4', {}, 'Your files'), profileView(event.profile)),
        );
        break;
      case 'replay-start':
        this.steps.append(
          h(
            'li',
            { class: 'step notice' },
            `Replaying ${num(event.cells)} earlier cells in a fresh sandbox…`,
          ),
        );
        break;
      case 'turn-restart':
        for (const [key, element] of this.stepElements) {
          if (key.startsWith(`${num(event.round)}:`)) element.remove();
        }
        this.stepElements = new Map(
          [...this.stepElements].filter(([key]) => !key.startsWith(`${num(event.round)}:`)),
        );
        break;
      case 'text-delta':
        this.textDelta(num(event.round), str(event.tag), str(event.text));
        break;
      case 'step-end':
        this.stepEnd(num(event.round), str(event.kind), str(event.text));
        break;
      case 'code-end':
        this.codeEnd(num(event.round), str(event.code));
        break;
      case 'execution-start':
        this.executionStart(
          str(event.outputId),
          typeof event.started_ms === 'number' ? event.started_ms : undefined,
        );
        break;
      case 'execution-output': {
        const cell = this.cells.get(str(event.outputId));
        cell?.live.append(document.createTextNode(str(event.text)));
        break;
      }
      case 'execution-end':
        this.executionEnd(str(event.outputId), rec(event.result));
        break;
      case 'ask':
        this.askQuestion = str(event.question);
        break;
      case 'artifact-saved':
        break;
      case 'notice':
        this.steps.append(h('li', { class: 'step notice' }, str(event.text)));
        break;
      case 'answer-end':
        this.answer(str(event.answer), groundingOf(event.grounding));
        break;
      case 'turn-end':
        this.artifacts(arr(rec(event.result).artifacts).map(rec));
        break;
      case 'error': {
        const error = rec(event.error);
        this.steps.append(
          h(
            'li',
            { class: 'step error', role: 'alert' },
            h('strong', {}, str(error.message)),
            h('p', {}, str(error.fix)),
          ),
        );
        break;
      }
      case 'turn-done':
        this.done(str(event.status), rec(event.termination));
        break;
      default:
        break;
    }
  }

  private stepElement(round: number, kind: string): HTMLElement {
    const key = `${round}:${kind}`;
    let element = this.stepElements.get(key);
    if (element === undefined) {
      const body =
        kind === 'code'
          ? h('pre', { class: 'code', tabindex: '0', 'aria-label': `Code of round ${round}` }, h('code', {}))
          : h('div', { class: 'step-text' });
      element = h(
        'li',
        { class: `step step-${kind}`, 'data-kind': kind },
        h('h4', {}, stepLabel[kind] ?? kind, h('span', { class: 'round' }, ` · round ${round}`)),
        body,
      );
      this.stepElements.set(key, element);
      this.steps.append(element);
    }
    return element;
  }

  private textDelta(round: number, kind: string, text: string): void {
    if (kind === 'answer') return; // shown grounded at `answer-end`
    const element = this.stepElement(round, kind);
    const target = element.querySelector('code') ?? element.querySelector('.step-text');
    target?.append(document.createTextNode(text));
  }

  private stepEnd(round: number, kind: string, text: string): void {
    if (kind === 'answer' || kind === 'code') return;
    const element = this.stepElement(round, kind);
    const target = element.querySelector('.step-text');
    if (target !== null) target.textContent = text.trim();
  }

  private codeEnd(round: number, code: string): void {
    const element = this.stepElement(round, 'code');
    const pre = element.querySelector('pre');
    pre?.replaceChildren(highlightedCode(code));
  }

  /** `startedMs`: when the cell began by the server's clock (absent from older servers' events: counted from now). */
  private executionStart(outputId: string, startedMs?: number): void {
    // After a reload the cell has been running a while: its time counts from its start, not from this event's replay.
    const runningForMs =
      startedMs === undefined ? 0 : Math.max(0, Date.now() + this.serverClockAheadMs - startedMs);
    const started = performance.now() - runningForMs;
    const elapsedText = (): string => `${((performance.now() - started) / 1000).toFixed(1)} s`;
    const elapsed = h('span', { class: 'elapsed' }, elapsedText());
    const live = h('pre', { class: 'live-output', 'aria-live': 'off' });
    const element = h(
      'li',
      { class: 'step step-execution running', id: `out-${outputId}`, 'data-output': outputId },
      h('h4', {}, `Output ${outputId}`, h('span', { class: 'cell-state' }, ' · running '), elapsed),
      live,
    );
    const timer = window.setInterval(() => {
      elapsed.textContent = elapsedText();
    }, 200);
    this.cells.set(outputId, { element, live, timer, started });
    this.steps.append(element);
  }

  private executionEnd(outputId: string, result: EventRecord): void {
    let cell = this.cells.get(outputId);
    if (cell === undefined) {
      this.executionStart(outputId);
      cell = this.cells.get(outputId);
      if (cell === undefined) return;
    }
    window.clearInterval(cell.timer);
    const status = str(result.status);
    cell.element.classList.remove('running');
    cell.element.classList.add(`cell-${status}`);
    const state = cell.element.querySelector('.cell-state');
    if (state !== null) state.textContent = ` · ${status} `;
    const elapsed = cell.element.querySelector('.elapsed');
    if (elapsed !== null) elapsed.textContent = durationText(result.durationMs);

    const stdout = str(rec(result.stdout).text);
    const stderr = str(rec(result.stderr).text);
    const value = str(result.value);
    cell.live.remove();
    if (stdout !== '') cell.element.append(h('pre', { class: 'stdout' }, stdout));
    if (stderr !== '') cell.element.append(h('pre', { class: 'stderr' }, stderr));
    if (value !== '') cell.element.append(h('pre', { class: 'value' }, value));
    const error = rec(result.error);
    if (str(error.name) !== '') {
      cell.element.append(h('pre', { class: 'cell-error' }, `${str(error.name)}: ${str(error.value)}`));
    }
    if (str(result.statusDetail) !== '')
      cell.element.append(h('p', { class: 'notice' }, str(result.statusDetail)));
    for (const tableValue of arr(result.tables)) {
      const table = rec(tableValue);
      const columns = arr(table.columns).map(str);
      const rows = arr(table.rows).map(arr);
      const index = arr(table.index).map(str);
      const caption = `${str(table.id)} — ${counted(num(table.totalRows), 'row')}`;
      cell.element.append(
        h(
          'div',
          { class: 'table-scroll', tabindex: '0', role: 'region', 'aria-label': caption },
          h(
            'table',
            {},
            h('caption', {}, caption),
            h(
              'thead',
              {},
              h('tr', {}, h('td', {}), ...columns.map((column) => h('th', { scope: 'col' }, column))),
            ),
            h(
              'tbody',
              {},
              ...rows.map((row, i) =>
                h(
                  'tr',
                  {},
                  h('th', { scope: 'row' }, index[i] ?? ''),
                  ...row.map((cellValue) => h('td', {}, cellValue === null ? '' : String(cellValue))),
                ),
              ),
            ),
          ),
        ),
      );
    }
    // Captioned as the report captions them ("Figure 1 of output E7"): the kernel's ids ("figure-13-1") mean nothing to a reader.
    for (const [position, figureValue] of arr(result.figures).entries()) {
      const figure = rec(figureValue);
      const data = str(figure.dataBase64);
      const name = str(figure.name);
      const caption = `Figure ${position + 1} of output ${outputId}`;
      const image = h('img', {
        alt: caption,
        width: String(num(figure.widthPx)),
        height: String(num(figure.heightPx)),
      });
      // The server's figure file (by name), or the bytes in the event (turns recorded before figures were files).
      if (FIGURE_NAME.test(name)) showServerImage(image, figurePath(this.threadId, this.turn.index, name));
      else if (data !== '' && BASE64.test(data)) image.src = `data:image/png;base64,${data}`;
      else continue;
      cell.element.append(h('figure', {}, image, h('figcaption', {}, caption)));
    }
    for (const [position, chartValue] of arr(result.charts).entries()) {
      const chartId = str(rec(chartValue).id);
      if (!/^[A-Za-z0-9_-]+$/.test(chartId)) continue;
      const caption = `Chart ${position + 1} of output ${outputId}`;
      // Drawn by the server's chart workers to sanitized SVG, shown as an image (no script runs in an image).
      const image = h('img', { class: 'chart', alt: caption });
      const figure = h('figure', { class: 'chart-figure' }, image, h('figcaption', {}, caption));
      const path = chartPath(this.threadId, this.turn.index, chartId);
      image.addEventListener('error', () => {
        figure.replaceChildren(h('p', { class: 'notice' }, `${caption} could not be drawn; see the report.`));
        // The server's reason (a remote data URL, an unknown field type) tells the reader what was wrong.
        void imageProblem(path).then((problem) => {
          if (problem !== null) figure.replaceChildren(h('p', { class: 'notice' }, `${caption}: ${problem}`));
        });
      });
      showServerImage(image, path);
      cell.element.append(figure);
    }
  }

  private answer(text: string, grounding: AnswerGrounding | null): void {
    this.steps.append(
      h(
        'li',
        { class: 'step step-answer', 'data-kind': 'answer' },
        h('h4', {}, 'Answer'),
        answerView(text, grounding),
        // Only under an answer that has checked numbers to explain.
        (grounding?.segments.length ?? 0) === 0
          ? null
          : h(
              'p',
              { class: 'grounding-key' },
              'A number tagged E12 was printed by output E12 (follow its link); one tagged ? was printed by no output (unverified).',
            ),
      ),
    );
  }

  private artifacts(artifacts: EventRecord[]): void {
    if (artifacts.length === 0) return;
    const base = `/v1/threads/${encodeURIComponent(this.threadId)}/turns/${this.turn.index}/artifacts/`;
    this.footer.append(
      h(
        'div',
        { class: 'artifacts' },
        h('h4', {}, 'Files the code wrote'),
        h(
          'ul',
          {},
          ...artifacts.map((artifact) => {
            const path = str(artifact.path);
            const href = `${base}${path.split('/').map(encodeURIComponent).join('/')}`;
            return h(
              'li',
              {},
              h('a', { href, download: path.split('/').at(-1) ?? 'file', 'data-key-download': true }, path),
              ` (${formatBytes(num(artifact.sizeBytes))})`,
            );
          }),
        ),
      ),
    );
  }

  private done(status: string, termination: EventRecord): void {
    this.stop();
    this.status = status;
    const detail = str(termination.detail);
    const outcome = turnOutcome(status, str(termination.reason));
    this.setStatus(detail === '' ? outcome.label : `${outcome.label} — ${detail}`);
    this.element.classList.add(`turn-${outcome.look}`);
    for (const cell of this.cells.values()) {
      if (cell.element.classList.contains('running')) {
        cell.element.classList.remove('running');
        const state = cell.element.querySelector('.cell-state');
        if (state !== null) state.textContent = ` · ${status} `;
        // No record of the cell's end: the time this page watched it (0.0 s after a reload) is not its duration.
        const elapsed = cell.element.querySelector('.elapsed');
        if (elapsed !== null) elapsed.textContent = durationText(undefined);
      }
    }
    if (status !== 'queued' && status !== 'running') {
      const link = (format: ReportDownloadFormat, label: string) =>
        h(
          'a',
          {
            href: reportPath(this.threadId, this.turn.index, format),
            download: reportFileName[format],
            'data-key-download': true,
          },
          label,
        );
      this.footer.append(
        h(
          'div',
          { class: 'report-links' },
          h('h4', {}, 'Report'),
          h(
            'a',
            {
              href: reportPath(this.threadId, this.turn.index, 'html'),
              target: '_blank',
              rel: 'noopener noreferrer',
              // With an API key it is downloaded instead (a new tab cannot send the key).
              'data-key-download': reportFileName.html,
            },
            'Open the report',
          ),
          ' · Download: ',
          link('html', 'HTML'),
          ' · ',
          link('md', 'Markdown'),
          ' · ',
          link('ipynb', 'Notebook'),
          apiKey() === null ? null : h('p', { class: 'report-key-note' }, reportWithKeyNote),
        ),
      );
    }
    this.callbacks.onDone(this, outcome.label, status === 'finished' ? this.askQuestion : null);
  }
}

/** A cell's duration from its record; none recorded (an interrupted cell) reads as unknown, not 0.0 s. */
function durationText(durationMs: unknown): string {
  return typeof durationMs === 'number' && Number.isFinite(durationMs) && durationMs >= 0
    ? `${(durationMs / 1000).toFixed(1)} s`
    : 'duration unknown';
}

/** The server's grounding of an answer, checked before use (null: the answer is shown without links). */
function groundingOf(value: unknown): AnswerGrounding | null {
  const segments = arr(rec(value).segments).map(rec);
  if (segments.length === 0) return null;
  return {
    segments: segments.map((segment) => ({
      text: str(segment.text),
      numbers: arr(segment.numbers)
        .map(rec)
        .map((number) => ({
          text: str(number.text),
          start: num(number.start),
          end: num(number.end),
          verified: number.verified === true,
          outputId: typeof number.outputId === 'string' ? number.outputId : null,
          matchedText: typeof number.matchedText === 'string' ? number.matchedText : null,
        })),
    })),
  };
}
