import { chartPath, eventsPath, reportPath, type Turn } from './api.ts';
import { formatBytes, h } from './dom.ts';
import { arr, num, parseEvent, rec, str, type EventRecord } from './events.ts';
import { answerView } from './answer-markdown.ts';
import type { OutputText } from './grounding.ts';
import { highlightedCode } from './highlight.ts';
import { profileView } from './profile-view.ts';

const stepLabel: Record<string, string> = {
  analyze: 'Analyze',
  understand: 'Understand',
  code: 'Code',
  answer: 'Answer',
  ask: 'Question to you',
  text: 'Text',
};

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export interface TurnCallbacks {
  /** The turn's stream ended (`turn-done`): status and, when the model asked, its question. */
  onDone(view: TurnView, status: string, ask: string | null): void;
  /** The thread's outputs so far (for grounding the answer's numbers). */
  outputs: OutputText[];
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
  private source: EventSource | null = null;
  private askQuestion: string | null = null;
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

  /** Follows the turn's events; EventSource re-attaches with Last-Event-ID by itself if the connection drops. */
  follow(): void {
    const source = new EventSource(eventsPath(this.threadId, this.turn.index));
    this.source = source;
    source.onmessage = (message: MessageEvent<string>) => {
      const event = parseEvent(message.data);
      if (event !== null) this.handle(event);
    };
    source.onerror = () => {
      // A dropped connection is retried by EventSource itself (with Last-Event-ID); a refused one is closed.
      if (source.readyState === EventSource.CLOSED && this.source === source) {
        this.setStatus('the connection to the server was lost: reopen the analysis');
      }
    };
  }

  stop(): void {
    this.source?.close();
    this.source = null;
    for (const cell of this.cells.values()) window.clearInterval(cell.timer);
  }

  private setStatus(text: string): void {
    this.statusText.textContent = text;
  }

  handle(event: EventRecord): void {
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
        this.executionStart(str(event.outputId));
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
        this.answer(str(event.answer));
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

  private executionStart(outputId: string): void {
    const elapsed = h('span', { class: 'elapsed' }, '0.0 s');
    const live = h('pre', { class: 'live-output', 'aria-live': 'off' });
    const element = h(
      'li',
      { class: 'step step-execution running', id: `out-${outputId}`, 'data-output': outputId },
      h('h4', {}, `Output ${outputId}`, h('span', { class: 'cell-state' }, ' · running '), elapsed),
      live,
    );
    const started = performance.now();
    const timer = window.setInterval(() => {
      elapsed.textContent = `${((performance.now() - started) / 1000).toFixed(1)} s`;
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
    if (elapsed !== null) elapsed.textContent = `${(num(result.durationMs) / 1000).toFixed(1)} s`;

    const texts: string[] = [];
    const stdout = str(rec(result.stdout).text);
    const stderr = str(rec(result.stderr).text);
    const value = str(result.value);
    cell.live.remove();
    if (stdout !== '') cell.element.append(h('pre', { class: 'stdout' }, stdout));
    if (stderr !== '') cell.element.append(h('pre', { class: 'stderr' }, stderr));
    if (value !== '') cell.element.append(h('pre', { class: 'value' }, value));
    texts.push(stdout, value);
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
      texts.push(...rows.map((row) => row.map((cellValue) => String(cellValue)).join(' ')));
      const caption = `${str(table.id)} — ${num(table.totalRows)} rows`;
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
    for (const figureValue of arr(result.figures)) {
      const figure = rec(figureValue);
      const data = str(figure.dataBase64);
      if (!BASE64.test(data) || data === '') continue;
      cell.element.append(
        h(
          'figure',
          {},
          h('img', {
            src: `data:image/png;base64,${data}`,
            alt: `Figure ${str(figure.id)} drawn by ${outputId}`,
            width: String(num(figure.widthPx)),
            height: String(num(figure.heightPx)),
          }),
          h('figcaption', {}, str(figure.id)),
        ),
      );
    }
    for (const chartValue of arr(result.charts)) {
      const chartId = str(rec(chartValue).id);
      if (!/^[A-Za-z0-9_-]+$/.test(chartId)) continue;
      // Drawn by the server's chart workers to sanitized SVG, shown as an image (no script runs in an image).
      const image = h('img', {
        class: 'chart',
        src: chartPath(this.threadId, this.turn.index, chartId),
        alt: `Chart ${chartId} displayed by ${outputId}`,
      });
      const figure = h('figure', { class: 'chart-figure' }, image, h('figcaption', {}, chartId));
      image.addEventListener('error', () =>
        figure.replaceChildren(
          h('p', { class: 'notice' }, `Chart ${chartId} could not be drawn; see the report.`),
        ),
      );
      cell.element.append(figure);
    }
    this.callbacks.outputs.push({ outputId, text: texts.join('\n') });
  }

  private answer(text: string): void {
    this.steps.append(
      h(
        'li',
        { class: 'step step-answer', 'data-kind': 'answer' },
        h('h4', {}, 'Answer'),
        answerView(text, this.callbacks.outputs),
        h(
          'p',
          { class: 'grounding-key' },
          'Linked numbers were printed by the output named; numbers marked ? were printed by no execution (unverified).',
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
              h('a', { href, download: path.split('/').at(-1) ?? 'file' }, path),
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
    this.setStatus(detail === '' ? status : `${status} — ${detail}`);
    this.element.classList.add(`turn-${status}`);
    for (const cell of this.cells.values()) {
      if (cell.element.classList.contains('running')) {
        cell.element.classList.remove('running');
        const state = cell.element.querySelector('.cell-state');
        if (state !== null) state.textContent = ` · ${status} `;
      }
    }
    if (status !== 'queued' && status !== 'running') {
      const link = (format: 'html' | 'md' | 'ipynb', label: string) =>
        h(
          'a',
          { href: reportPath(this.threadId, this.turn.index, format), download: `report.${format}` },
          label,
        );
      this.footer.append(
        h(
          'div',
          { class: 'report-links' },
          h('h4', {}, 'Report'),
          h(
            'a',
            { href: reportPath(this.threadId, this.turn.index, 'html'), target: '_blank', rel: 'noopener' },
            'Open the report',
          ),
          ' · Download: ',
          link('html', 'HTML'),
          ' · ',
          link('md', 'Markdown'),
          ' · ',
          link('ipynb', 'Notebook'),
        ),
      );
    }
    this.callbacks.onDone(this, status, status === 'finished' ? this.askQuestion : null);
  }
}
