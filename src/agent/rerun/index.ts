export { rerunAnalysis, countNumbers, describeNumbers } from './rerun.ts';
export type { RerunOptions, RerunResult, RerunCell } from './rerun-options.ts';
export {
  updateAnswerNumbers,
  locateMentions,
  lineLabel,
  formatLike,
  STALE_MARK,
  NOT_GROUNDED_MARK,
  SIGN_CHANGED_MARK,
} from './answer-numbers.ts';
export type { NumberUpdate, NumberUpdateStatus, UpdatedAnswer } from './answer-numbers.ts';
export { rewriteSystemPrompt, rewriteUserMessage } from './rewrite-answer.ts';
