import { streamAnalysis } from '../agent/index.ts';
import type { AgentEvent, LanguageModel, ModelProfileName, SandboxFactory } from '../agent/index.ts';
import type { SandboxOptions } from '../sandbox/index.ts';

/**
 * The one place the server touches the library's conversation API. Every
 * other server module sees only `EngineThread`, so a change in the shape of
 * the library's thread touches this file alone.
 *
 * Today this is built on one-shot `streamAnalysis`: each question is its own
 * run in its own run folder over the thread's workspace, and the sandbox is
 * closed when the run ends. (When the library's thread of issue #12 lands,
 * `ask` becomes `thread.ask` on one long-lived session, `close` gives that
 * session back, and a closed thread resumes by replay.)
 */
export interface EngineOptions {
  /** A model for one thread; the offline analyst keeps per-run state, so each thread gets its own. */
  createModel: () => LanguageModel;
  profile?: ModelProfileName;
  createSandbox?: SandboxFactory;
  sandbox?: Omit<SandboxOptions, 'workspaceDir' | 'signal'>;
  maxRounds?: number;
}

export interface AskOptions {
  /** Where this turn's run folder goes (trace.jsonl, artifacts/). */
  runDir: string;
  signal: AbortSignal;
}

export interface EngineThread {
  /** Runs one question; the stream always ends with `run-end`. */
  ask(question: string, options: AskOptions): AsyncGenerator<AgentEvent, void, undefined>;
  /** True while a sandbox session is held between turns. */
  readonly sandboxOpen: boolean;
  /** Gives the sandbox back; the next `ask` resumes. */
  close(): Promise<void>;
}

export interface OpenThreadOptions {
  workspaceDir: string;
}

export function openEngineThread(thread: OpenThreadOptions, engine: EngineOptions): EngineThread {
  return {
    sandboxOpen: false,
    ask(question, options) {
      return streamAnalysis({
        instruction: question,
        workspaceDir: thread.workspaceDir,
        model: engine.createModel(),
        outDir: options.runDir,
        signal: options.signal,
        ...(engine.profile === undefined ? {} : { profile: engine.profile }),
        ...(engine.createSandbox === undefined ? {} : { createSandbox: engine.createSandbox }),
        ...(engine.sandbox === undefined ? {} : { sandbox: engine.sandbox }),
        ...(engine.maxRounds === undefined ? {} : { maxRounds: engine.maxRounds }),
      });
    },
    async close() {},
  };
}
