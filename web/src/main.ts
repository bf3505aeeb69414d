import {
  ApiError,
  cancelTurn,
  createThread,
  getThread,
  listThreads,
  startTurn,
  uploadFile,
  type FileObject,
  type Thread,
} from './api.ts';
import { byId, formatBytes, h } from './dom.ts';
import type { OutputText } from './grounding.ts';
import { TurnView } from './turn-view.ts';

const suggestions = [
  'Describe this data: what is in it, and what stands out?',
  'Which columns have missing or odd values?',
  'What are the main trends over time?',
  'Which groups differ the most?',
];

interface State {
  thread: Thread | null;
  /** Uploaded files not yet attached to the thread (sent with the next turn). */
  pending: FileObject[];
  attached: FileObject[];
  running: TurnView | null;
  outputs: OutputText[];
  views: TurnView[];
}

const state: State = { thread: null, pending: [], attached: [], running: null, outputs: [], views: [] };

const turnsElement = byId('turns', HTMLDivElement);
const fileList = byId('file-list', HTMLUListElement);
const fileInput = byId('file-input', HTMLInputElement);
const dropZone = byId('drop-zone', HTMLDivElement);
const composer = byId('composer', HTMLFormElement);
const question = byId('composer-question', HTMLTextAreaElement);
const questionLabel = byId('composer-label', HTMLLabelElement);
const askButton = byId('ask', HTMLButtonElement);
const cancelButton = byId('cancel', HTMLButtonElement);
const statusLine = byId('status', HTMLParagraphElement);
const threadList = byId('thread-list', HTMLUListElement);
const suggestionBox = byId('suggestions', HTMLDivElement);

function say(text: string): void {
  statusLine.textContent = text;
}

function sayError(error: unknown, about = ''): void {
  const prefix = about === '' ? '' : `${about}: `;
  if (error instanceof ApiError)
    say(`${prefix}${error.fix === null ? error.message : `${error.message} ${error.fix}`}`);
  else say(`${prefix}${error instanceof Error ? error.message : String(error)}`);
}

function renderFiles(): void {
  const item = (file: FileObject, note: string) =>
    h('li', {}, h('span', { class: 'file-name' }, file.filename), ` ${formatBytes(file.bytes)} · ${note}`);
  fileList.replaceChildren(
    ...state.attached.map((file) => item(file, 'in the analysis')),
    ...state.pending.map((file) => item(file, 'uploaded, added with your next question')),
  );
}

function renderSuggestions(): void {
  const show = state.thread === null || state.thread.turns.length === 0;
  suggestionBox.replaceChildren(
    ...(show ? suggestions.map((text) => h('button', { type: 'button', class: 'suggestion' }, text)) : []),
  );
  for (const button of suggestionBox.querySelectorAll('button')) {
    button.addEventListener('click', () => {
      question.value = button.textContent ?? '';
      question.focus();
    });
  }
}

function setRunning(view: TurnView | null): void {
  state.running = view;
  askButton.disabled = view !== null;
  cancelButton.hidden = view === null;
  cancelButton.disabled = false;
}

async function upload(files: readonly File[]): Promise<void> {
  for (const file of files) {
    say(`Uploading ${file.name}…`);
    try {
      state.pending.push(await uploadFile(file));
      renderFiles();
      say(`Uploaded ${file.name}. Its profile is shown when the analysis starts.`);
    } catch (error) {
      sayError(error, `${file.name} was not uploaded`);
    }
  }
}

function addTurn(thread: Thread, index: number, follow: boolean): TurnView | null {
  const turn = thread.turns.find((candidate) => candidate.index === index);
  if (turn === undefined) return null;
  const view = new TurnView(thread.id, turn, {
    outputs: state.outputs,
    onDone: (done, status, ask) => {
      if (state.running === done) setRunning(null);
      questionLabel.textContent =
        ask === null ? 'Your follow-up question' : 'Your reply to the question above';
      if (follow) say(`Question ${done.turn.index} ${status}.`);
      void refreshThreads();
    },
  });
  state.views.push(view);
  turnsElement.append(view.element);
  view.follow();
  return view;
}

async function ask(text: string): Promise<void> {
  if (state.running !== null) return;
  askButton.disabled = true;
  try {
    if (state.thread === null) {
      state.thread = await createThread(state.pending.map((file) => file.id));
      state.attached.push(...state.pending);
      state.pending = [];
      history.replaceState(null, '', `#thread=${encodeURIComponent(state.thread.id)}`);
    }
    const fileIds = state.pending.map((file) => file.id);
    const turn = await startTurn(state.thread.id, text, fileIds);
    state.attached.push(...state.pending);
    state.pending = [];
    renderFiles();
    state.thread = { ...state.thread, turns: [...state.thread.turns, turn] };
    question.value = '';
    renderSuggestions();
    const view = addTurn(state.thread, turn.index, true);
    setRunning(view);
    say(`Question ${turn.index} sent.`);
  } catch (error) {
    askButton.disabled = false;
    sayError(error);
  }
}

function reset(): void {
  for (const view of state.views) view.stop();
  state.thread = null;
  state.pending = [];
  state.attached = [];
  state.outputs.length = 0;
  state.views = [];
  setRunning(null);
  turnsElement.replaceChildren();
  questionLabel.textContent = 'Your question';
  renderFiles();
  renderSuggestions();
}

async function open(threadId: string): Promise<void> {
  try {
    const thread = await getThread(threadId);
    reset();
    state.thread = thread;
    state.attached = [...thread.files];
    renderFiles();
    renderSuggestions();
    for (const turn of thread.turns) {
      const view = addTurn(thread, turn.index, false);
      if (view !== null && (turn.status === 'queued' || turn.status === 'running')) setRunning(view);
    }
    history.replaceState(null, '', `#thread=${encodeURIComponent(thread.id)}`);
    say(`Opened the analysis of ${thread.files.map((file) => file.filename).join(', ') || 'no files'}.`);
  } catch (error) {
    sayError(error);
  }
}

async function refreshThreads(): Promise<void> {
  try {
    const threads = await listThreads();
    threadList.replaceChildren(
      ...threads
        .sort((a, b) => b.created_at - a.created_at)
        .map((thread) => {
          const first = thread.turns[0]?.question ?? '(no question yet)';
          const label = `${first} — ${thread.files.map((file) => file.filename).join(', ') || 'no files'}`;
          const button = h(
            'button',
            {
              type: 'button',
              class: 'thread-link',
              'aria-current': thread.id === state.thread?.id ? 'true' : undefined,
            },
            label,
          );
          button.addEventListener('click', () => void open(thread.id));
          return h('li', {}, button);
        }),
    );
  } catch (error) {
    sayError(error);
  }
}

fileInput.addEventListener('change', () => {
  const files = Array.from(fileInput.files ?? []);
  fileInput.value = '';
  void upload(files);
});
dropZone.addEventListener('dragover', (event) => {
  event.preventDefault();
  dropZone.classList.add('dragging');
});
dropZone.addEventListener('dragleave', () => dropZone.classList.remove('dragging'));
dropZone.addEventListener('drop', (event) => {
  event.preventDefault();
  dropZone.classList.remove('dragging');
  void upload(Array.from(event.dataTransfer?.files ?? []));
});
composer.addEventListener('submit', (event) => {
  event.preventDefault();
  const text = question.value.trim();
  if (text !== '') void ask(text);
});
question.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) composer.requestSubmit();
});
cancelButton.addEventListener('click', () => {
  const view = state.running;
  if (view === null) return;
  cancelButton.disabled = true;
  say(`Cancelling question ${view.turn.index}…`);
  cancelTurn(view.threadId, view.turn.index).catch(sayError);
});
byId('new-thread', HTMLButtonElement).addEventListener('click', () => {
  reset();
  history.replaceState(null, '', '#');
  say('New analysis: add files, then ask.');
});

renderSuggestions();
void refreshThreads();
const fromHash = /^#thread=(.+)$/.exec(window.location.hash);
if (fromHash?.[1] !== undefined) void open(decodeURIComponent(fromHash[1]));
