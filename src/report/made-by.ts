import { plural } from '../util/plural.ts';
import { rerunOfFacts } from './rerun-of.ts';
import type { RunView } from './run-view.ts';

/**
 * Who made a run's answer, as the top of a report says it: the subtitle's
 * part ("offline analyst · 12 rounds") and the note shown when no language
 * model was used. A re-run chose nothing: it executed the cells an earlier
 * run recorded, so it is not "the offline analyst" nor "0 rounds", and no
 * rule "chose the next cell".
 */
export interface MadeBy {
  /** Plain text parts of the subtitle, after the run id and its start. */
  subtitle: string[];
  /** The sentence after "No language model was used." (plain text), or null when a model was used. */
  noModelNote: string | null;
}

export function madeBy(view: RunView): MadeBy {
  const { model } = view.start;
  const rerunOf = rerunOfFacts(view.start);
  if (rerunOf !== null) {
    // A re-run's run-start names the earlier run's model, which it never asks; a model asked to rewrite
    // the answer (--rewrite-answer) leaves the one model turn of the re-run (its name is in the answer).
    const rewritten = view.modelTurns.length > 0;
    return {
      subtitle: [
        `re-run of ${rerunOf.runId}`,
        rewritten ? 'answer rewritten by a model' : 'no model',
        `${plural(view.executions.length, 'recorded cell')} executed again`,
      ],
      noModelNote: rewritten
        ? null
        : `This is a re-run of run ${rerunOf.runId} on new data: the cells it recorded were executed again, and the numbers of its answer were taken again from the new outputs. No rule or model chose anything.`,
    };
  }
  return {
    subtitle: [model.offline ? 'offline analyst' : `model ${model.id}`, plural(view.rounds, 'round')],
    noModelNote: model.offline
      ? "This analysis was made by Datalyst's built-in offline analyst: deterministic rules that read the execution results and choose the next cell."
      : null,
  };
}
