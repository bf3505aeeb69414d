export { Thread, openThread } from './thread.ts';
export type { ThreadSummary, ThreadSandboxState } from './thread.ts';
export { resumeThread } from './resume-thread.ts';
export { ThreadTurn } from './thread-turn.ts';
export type { ThreadOptions, ResumeThreadOptions, AskOptions } from './thread-options.ts';
