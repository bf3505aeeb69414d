import {
  ApiError,
  apiKey,
  cancelTurn,
  createThread,
  deleteThread,
  downloadWithKey,
  reportWithKeyNote,
  getProfile,
  getThread,
  listThreads,
  onUnauthorized,
  setApiKey,
  startTurn,
  uploadFile,
  type FileObject,
  type Thread,
} from './api.ts';
import { byId, counted, formatBytes, h } from './dom.ts';
import { arr, rec, str } from './events.ts';
import { profileView } from './profile-view.ts';
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
  views: TurnView[];
}

const state: State = { thread: null, pending: [], attached: [], running: null, views: [] };

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
const profiles = byId('profiles', HTMLDivElement);
const keyDetails = byId('key-details', HTMLDetailsElement);
const keyForm = byId('key-form', HTMLFormElement);
const keyInput = byId('key-input', HTMLInputElement);
const keyPrompt = byId('key-prompt', HTMLParagraphElement);
const keyState = byId('key-state', HTMLSpanElement);
const threadsNav = byId('threads-nav', HTMLElement);
const threadsToggle = byId('threads-toggle', HTMLButtonElement);
const threadsBody = byId('threads-body', HTMLDivElement);

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

/**
 * Narrow screens keep the past analyses and the key form behind "Past analyses" (styles.css hides
 * `.threads.collapsed .threads-body` at 720 px and less; wider, the class changes nothing).
 */
function showThreads(shown: boolean): void {
  const hadFocus = threadsBody.contains(document.activeElement);
  threadsNav.classList.toggle('collapsed', !shown);
  threadsToggle.setAttribute('aria-expanded', String(shown));
  // Focus in the list being hidden returns to its button (a no-op where the button is not displayed).
  if (!shown && hadFocus) threadsToggle.focus();
}

/** The turn just asked: the only one with `turn-latest` (room below it), its question scrolled to the top. */
function showLatest(view: TurnView): void {
  for (const other of state.views) other.element.classList.toggle('turn-latest', other === view);
  view.element.scrollIntoView({ block: 'start' });
}

function setRunning(view: TurnView | null): void {
  state.running = view;
  askButton.disabled = view !== null;
  cancelButton.hidden = view === null;
  cancelButton.disabled = false;
}

async function upload(files: readonly File[]): Promise<void> {
  let added = 0;
  for (const file of files) {
    say(`Uploading ${file.name}…`);
    try {
      state.pending.push(await uploadFile(file));
      added += 1;
      renderFiles();
      say(`Uploaded ${file.name}.`);
    } catch (error) {
      sayError(error, `${file.name} was not uploaded`);
    }
  }
  // Before the first question the files make the thread at once, so that their profile shows now.
  if (added > 0 && (state.thread === null || state.thread.turns.length === 0)) await prepareThread();
}

/** The thread for the files uploaded so far (made again when more come before the first question), then its profile. */
async function prepareThread(): Promise<void> {
  const previous = state.thread;
  const files = [...state.attached, ...state.pending];
  try {
    const thread = await createThread(files.map((file) => file.id));
    if (state.thread !== previous || state.running !== null) {
      // A question was asked meanwhile (its own thread holds these files): this one is not needed.
      await deleteThread(thread.id).catch(() => undefined);
      return;
    }
    state.thread = thread;
    state.attached = files;
    state.pending = [];
    renderFiles();
    history.replaceState(null, '', `#thread=${encodeURIComponent(thread.id)}`);
    // A thread with no question yet, replaced by one with every file: nothing of it is lost.
    if (previous !== null) await deleteThread(previous.id).catch(() => undefined);
    void refreshThreads();
    await showProfile(thread.id);
  } catch (error) {
    sayError(error, 'The files could not be prepared');
  }
}

/** Each file's profile (sheets, columns and types, sample values, reading notes), made in the sandbox. */
async function showProfile(threadId: string): Promise<void> {
  // Shown in place, not in the status line: a message there (a refused upload) must stay readable.
  profiles.replaceChildren(h('p', { class: 'profile-loading' }, 'Reading your files in the sandbox…'));
  try {
    const { profile } = await getProfile(threadId);
    if (state.thread?.id !== threadId) return;
    profiles.replaceChildren(h('h3', {}, 'What is in your files'), profileView(profile));
    say(profileSummary(profile));
  } catch (error) {
    if (state.thread?.id !== threadId) return;
    profiles.replaceChildren();
    sayError(error, 'The files could not be profiled');
  }
}

/** The status line once the profile is shown: it must not say the files were read when some could not be. */
function profileSummary(profile: unknown): string {
  const files = arr(rec(profile).files).map(rec);
  const unread = files.filter((file) => str(file.error) !== '').length;
  if (files.length > 0 && unread === files.length)
    return 'None of your files could be read: the reasons are under Files. Add a CSV, Excel, JSON or SQLite file.';
  if (unread > 0)
    return `${counted(unread, 'file')} of ${files.length} could not be read (the reasons are under Files); the others are profiled there. Ask a question.`;
  return 'Your files are read: their profile is shown under Files. Ask a question.';
}

function addTurn(thread: Thread, index: number, follow: boolean): TurnView | null {
  const turn = thread.turns.find((candidate) => candidate.index === index);
  if (turn === undefined) return null;
  const view = new TurnView(thread.id, turn, {
    onUnauthorized: askForKey,
    onDone: (done, outcome, ask) => {
      if (state.running === done) setRunning(null);
      questionLabel.textContent =
        ask === null ? 'Your follow-up question' : 'Your reply to the question above';
      // The status line is the page's live region: the end of a turn someone waits for is said there.
      if (follow) say(`Question ${done.turn.index}: ${outcome}.`);
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
    // Files added to a thread that has run: their profile (with the others') shows above.
    if (fileIds.length > 0) void showProfile(state.thread.id);
    state.thread = { ...state.thread, turns: [...state.thread.turns, turn] };
    question.value = '';
    renderSuggestions();
    const view = addTurn(state.thread, turn.index, true);
    setRunning(view);
    if (view !== null) showLatest(view);
    // The Ask button is disabled while the turn runs, and a disabled button drops the focus to the page:
    // it goes back to the question box, where the next question is typed (the turn stays scrolled into view).
    if (document.activeElement === askButton || document.activeElement === document.body)
      question.focus({ preventScroll: true });
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
  state.views = [];
  profiles.replaceChildren();
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
      // A turn still running is followed to its end, which the status line says; ended ones are not announced again.
      const running = turn.status === 'queued' || turn.status === 'running';
      const view = addTurn(thread, turn.index, running);
      if (view !== null && running) setRunning(view);
    }
    // No question yet: its files' profile (the first turn shows it otherwise).
    if (thread.turns.length === 0 && thread.files.length > 0) void showProfile(thread.id);
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
      ...threads.sort((a, b) => b.created_at - a.created_at).map((thread) => threadItem(thread)),
    );
  } catch (error) {
    sayError(error);
  }
}

/** A past thread: open it, or delete it after a confirmation in place (no dialog). */
function threadItem(thread: Thread): HTMLLIElement {
  const first = thread.turns[0]?.question ?? '(no question yet)';
  const label = `${first} — ${thread.files.map((file) => file.filename).join(', ') || 'no files'}`;
  const openButton = h(
    'button',
    {
      type: 'button',
      class: 'thread-link',
      'aria-current': thread.id === state.thread?.id ? 'true' : undefined,
    },
    label,
  );
  openButton.addEventListener('click', () => {
    showThreads(false);
    void open(thread.id);
  });
  const deleteButton = h(
    'button',
    { type: 'button', class: 'thread-delete', 'aria-label': `Delete the analysis “${label}”` },
    'Delete',
  );
  const item = h('li', { class: 'thread-item' }, openButton, deleteButton);
  deleteButton.addEventListener('click', () => {
    const confirmButton = h('button', { type: 'button', class: 'danger' }, 'Delete for good');
    const keepButton = h('button', { type: 'button' }, 'Keep');
    const confirmation = h(
      'div',
      { class: 'thread-confirm', role: 'group', 'aria-label': 'Confirm the deletion' },
      h('span', {}, 'Delete this analysis, its files and its reports?'),
      confirmButton,
      keepButton,
    );
    deleteButton.hidden = true;
    item.append(confirmation);
    keepButton.focus();
    keepButton.addEventListener('click', () => {
      confirmation.remove();
      deleteButton.hidden = false;
      deleteButton.focus();
    });
    confirmButton.addEventListener('click', () => {
      confirmButton.disabled = true;
      deleteThread(thread.id)
        .then(() => {
          if (state.thread?.id === thread.id) {
            reset();
            history.replaceState(null, '', '#');
          }
          say('The analysis was deleted.');
          return refreshThreads();
        })
        .catch((error: unknown) => {
          confirmButton.disabled = false;
          sayError(error, 'The analysis was not deleted');
        });
    });
  });
  return item;
}

/** A 401: the page asks for the server's API key, and says why. */
function askForKey(): void {
  showThreads(true);
  keyDetails.open = true;
  keyPrompt.hidden = false;
  keyPrompt.textContent =
    apiKey() === null
      ? 'This server needs its API key. Enter it below; it is kept in this tab only.'
      : 'The server refused this API key. Check it and enter it again.';
  say(keyPrompt.textContent);
  keyInput.focus();
}

function renderKeyState(): void {
  keyState.textContent = apiKey() === null ? 'none set' : 'set for this tab';
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
threadsToggle.addEventListener('click', () =>
  showThreads(threadsToggle.getAttribute('aria-expanded') !== 'true'),
);
byId('new-thread', HTMLButtonElement).addEventListener('click', () => {
  showThreads(false);
  reset();
  history.replaceState(null, '', '#');
  say('New analysis: add files, then ask.');
});

keyForm.addEventListener('submit', (event) => {
  event.preventDefault();
  setApiKey(keyInput.value);
  keyInput.value = '';
  keyPrompt.hidden = true;
  renderKeyState();
  say(apiKey() === null ? 'The API key was forgotten.' : 'The API key is set for this tab.');
  void refreshThreads();
  // A turn whose events were refused for want of the key is followed again, in place.
  for (const view of state.views) view.keyChanged();
  const hash = /^#thread=(.+)$/.exec(window.location.hash);
  if (hash?.[1] !== undefined && state.thread === null) void open(decodeURIComponent(hash[1]));
});
byId('key-forget', HTMLButtonElement).addEventListener('click', () => {
  setApiKey(null);
  renderKeyState();
  say('The API key was forgotten.');
});
onUnauthorized(askForKey);
// Downloads with a key go through fetch (a plain link cannot send it).
document.addEventListener('click', (event) => {
  const link = event.target instanceof Element ? event.target.closest('a[data-key-download]') : null;
  if (!(link instanceof HTMLAnchorElement) || apiKey() === null) return;
  event.preventDefault();
  const name = link.getAttribute('download') ?? link.dataset.keyDownload ?? 'download';
  downloadWithKey(link.getAttribute('href') ?? '', name === '' ? 'download' : name)
    .then(() => {
      // "Open the report" (target _blank) could not open it: say why, where it is read.
      if (link.target === '_blank') say(reportWithKeyNote);
    })
    .catch((error: unknown) => sayError(error, 'The download failed'));
});

renderKeyState();
renderSuggestions();
void refreshThreads();
const fromHash = /^#thread=(.+)$/.exec(window.location.hash);
if (fromHash?.[1] !== undefined) void open(decodeURIComponent(fromHash[1]));
