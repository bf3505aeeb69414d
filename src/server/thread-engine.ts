import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { openThread, resumeThread } from '../agent/index.ts';
import type {
  AgentEvent,
  LanguageModel,
  ModelProfileName,
  SandboxFactory,
  Thread,
  ThreadOptions,
  TurnResult,
} from '../agent/index.ts';
import type { SandboxOptions } from '../sandbox/index.ts';
import { AnswerGrounder } from './answer-grounding.ts';
import { prefetchCharts } from './chart-drawings.ts';
import { storeFigures } from './figure-files.ts';

/**
 * The one place the server touches the library's conversation API (the
 * thread of issue #12). Every other server module sees only `EngineThread`,
 * so a change in the shape of the library's thread touches this file alone.
 *
 * A server thread is one library thread: one sandbox session with a live
 * kernel across questions, one run folder (`trace.jsonl`, `artifacts/`). A
 * thread whose process is gone (a restart) or whose sandbox was given back
 * (idle, or because a follow-up attached files) resumes by replaying its
 * recorded cells in a fresh session; the library then finds the files that
 * came since, profiles them and tells the model before the question.
 *
 * A thread without files goes to a language model (`whenNoFiles:
 * 'ask-model'`: DeepAnalyze's "Simple Chat (No Files)"); the offline analyst,
 * which can only analyse data, ends it `no-data` with a detail that says how
 * to attach files.
 */
export interface EngineOptions {
  /** A model for one thread; the offline analyst keeps per-thread state, so each thread gets its own. */
  createModel: () => LanguageModel;
  profile?: ModelProfileName;
  createSandbox?: SandboxFactory;
  sandbox?: Omit<SandboxOptions, 'workspaceDir' | 'signal'>;
  /** Model turns per question at most. Default the library's (30). */
  maxRounds?: number;
}

export interface EngineThread {
  /** Asks one question; the stream ends with the library's `turn-end`, whose result is also returned. */
  ask(question: string, signal: AbortSignal): AsyncGenerator<AgentEvent, TurnResult | null, undefined>;
  /** True while a sandbox session (a live kernel) is held. */
  readonly sandboxOpen: boolean;
  /** Gives the sandbox back; the next question replays the recorded cells first. */
  releaseSandbox(): Promise<void>;
  /** Ends the thread (cancels a running turn, closes the sandbox, finishes the trace). */
  close(): Promise<void>;
}

export interface OpenEngineThreadOptions {
  workspaceDir: string;
  /** The thread's run folder; a trace already there is resumed. */
  runDir: string;
  /** Where work ahead of need goes (drawing charts before a view asks): the server's spare time. Default: run at once. */
  whenSpare?: (task: () => Promise<unknown>) => void;
}

/** Opens the thread, or resumes it when its run folder already holds a trace. */
export async function openEngineThread(
  thread: OpenEngineThreadOptions,
  engine: EngineOptions,
): Promise<EngineThread> {
  const model = engine.createModel();
  const options: Omit<ThreadOptions, 'workspaceDir' | 'outDir'> = {
    model,
    // The server decides when an idle thread gives its sandbox back.
    idleTimeoutMs: null,
    whenNoFiles: model.offline === true ? 'stop' : 'ask-model',
    ...(engine.profile === undefined ? {} : { profile: engine.profile }),
    ...(engine.createSandbox === undefined ? {} : { createSandbox: engine.createSandbox }),
    ...(engine.sandbox === undefined ? {} : { sandbox: engine.sandbox }),
    ...(engine.maxRounds === undefined ? {} : { maxRounds: engine.maxRounds }),
  };
  const hasTrace = await stat(path.join(thread.runDir, 'trace.jsonl')).then(
    (stats) => stats.isFile(),
    () => false,
  );
  const library: Thread = hasTrace
    ? await resumeThread(thread.runDir, { ...options, workspaceDir: thread.workspaceDir })
    : await openThread({ ...options, workspaceDir: thread.workspaceDir, outDir: thread.runDir });
  const grounder = new AnswerGrounder(thread.runDir, hasTrace);
  const whenSpare = thread.whenSpare ?? ((task) => void task());
  return {
    async *ask(question, signal) {
      let result: TurnResult | null = null;
      // Read before the turn writes to the trace: the turn's own cells are added as they end.
      grounder.start();
      for await (const libraryEvent of library.ask(question, { signal })) {
        const event = await withAttachHint(libraryEvent, thread.workspaceDir);
        if (event.type === 'turn-end') result = event.result;
        // Charts are drawn once they appear, into the run folder: the UI's first view then draws none (issue #14).
        if (event.type === 'execution-end') {
          grounder.add(event.outputId, event.result);
          const { charts } = event.result;
          if (charts.length > 0) whenSpare(() => prefetchCharts(thread.runDir, charts));
          // Figures go to the run folder; the event names them (no base64 in SSE or the turn log).
          yield await storeFigures(thread.runDir, event);
          continue;
        }
        // The answer goes out with its numbers grounded by the report's rules, for the web UI to link (issue #14).
        if (event.type === 'answer-end') {
          yield { ...event, grounding: await grounder.ground(event.answer) } as AgentEvent;
          continue;
        }
        yield event;
      }
      return result;
    },
    get sandboxOpen() {
      return library.sandboxState === 'open';
    },
    releaseSandbox: () => library.releaseSandbox(),
    async close() {
      await library.close();
    },
  };
}

/** What an API user does about a thread without files: the library's detail knows nothing of `file_ids`. */
export const ATTACH_FILES_HINT =
  'Upload the data files with POST /v1/files and attach them to the next question with `file_ids` (with the thread’s `thread_id`), or start a new thread with them.';

/** A turn that ended `no-data` on a thread with no file at all gets the hint (the trace keeps the library's words). */
async function withAttachHint(event: AgentEvent, workspaceDir: string): Promise<AgentEvent> {
  if (event.type !== 'turn-end' || event.result.termination.reason !== 'no-data') return event;
  const entries = await readdir(workspaceDir).catch(() => []);
  if (entries.length > 0) return event;
  const termination = { ...event.result.termination };
  termination.detail = `${termination.detail} ${ATTACH_FILES_HINT}`;
  return { ...event, result: { ...event.result, termination } };
}
