import {
  buildNumberIndex,
  findNumberMentions,
  groundMention,
  groundingSources,
  type ExecutionRecord,
  type GroundingSource,
} from '../trace/index.ts';
import type { EvidenceDraft } from './deep-roles.ts';
import type { EvidenceItem, EvidenceNumber } from './deep-schema.ts';

/** What the bank made of one sub-analysis's drafts: the items, and the citations it had to drop (they did not resolve). */
export interface BankedEvidence {
  items: EvidenceItem[];
  /** Output and figure references of the drafts that name nothing in the sub-analysis's trace, e.g. `E9`. */
  dropped: string[];
}

const outputReference = /^(?:(S\d+):)?(E\d+)$/;
const figureReference = /^(?:(S\d+):)?(E\d+)#(figure|chart)(\d+)$/;

/**
 * Step 3, the evidence bank: every finding under a stable id (`EV1`…), its
 * outputs namespaced by sub-analysis (`S2:E4`, since every sub-analysis
 * numbers its outputs from `E1`), and its numbers grounded against the
 * outputs it cites, and only those. A number not found there is kept and
 * flagged unverified; a citation that names no output of the sub-analysis
 * is dropped (every citation in `deep.json` resolves).
 */
export class EvidenceBank {
  private readonly evidence: EvidenceItem[] = [];
  private readonly executionsBySub = new Map<string, readonly ExecutionRecord[]>();

  get items(): readonly EvidenceItem[] {
    return this.evidence;
  }

  /** Banks one sub-analysis's drafts; `executions` are every execution of its trace. */
  add(
    subAnalysisId: string,
    drafts: readonly EvidenceDraft[],
    executions: readonly ExecutionRecord[],
  ): BankedEvidence {
    this.executionsBySub.set(subAnalysisId, executions);
    const byOutputId = new Map(executions.map((execution) => [execution.outputId, execution]));
    const dropped: string[] = [];
    const items: EvidenceItem[] = [];
    for (const draft of drafts) {
      const claim = draft.claim.trim();
      if (claim.length === 0) continue;
      const outputs: string[] = [];
      for (const reference of draft.outputs) {
        const match = outputReference.exec(reference.trim());
        const outputId = match?.[2];
        if (
          match === null ||
          outputId === undefined ||
          (match[1] !== undefined && match[1] !== subAnalysisId) ||
          !byOutputId.has(outputId)
        ) {
          dropped.push(reference);
          continue;
        }
        const cited = `${subAnalysisId}:${outputId}`;
        if (!outputs.includes(cited)) outputs.push(cited);
      }
      const figures: string[] = [];
      for (const reference of draft.figures) {
        const match = figureReference.exec(reference.trim());
        const execution = match?.[2] === undefined ? undefined : byOutputId.get(match[2]);
        if (
          match === null ||
          execution === undefined ||
          (match[1] !== undefined && match[1] !== subAnalysisId)
        ) {
          dropped.push(reference);
          continue;
        }
        const kind = match[3] as 'figure' | 'chart';
        const index = Number(match[4]);
        const available =
          kind === 'figure' ? execution.result.figures.length : execution.result.charts.length;
        if (index >= available) {
          dropped.push(reference);
          continue;
        }
        const cited = `${subAnalysisId}:${execution.outputId}#${kind}${index}`;
        if (!figures.includes(cited)) figures.push(cited);
        // A figure's output is part of what the claim rests on.
        const output = `${subAnalysisId}:${execution.outputId}`;
        if (!outputs.includes(output)) outputs.push(output);
      }
      const item: EvidenceItem = {
        id: `EV${this.evidence.length + 1}`,
        subAnalysisId,
        claim,
        numbers: this.ground(claim, outputs),
        outputs,
        figures,
      };
      this.evidence.push(item);
      items.push(item);
    }
    return { items, dropped };
  }

  get(id: string): EvidenceItem | undefined {
    return this.evidence.find((item) => item.id === id);
  }

  /** The items with these ids, in the order given; unknown ids are left out. */
  select(ids: readonly string[]): EvidenceItem[] {
    return ids.flatMap((id) => {
      const item = this.get(id);
      return item === undefined ? [] : [item];
    });
  }

  /**
   * Grounds the numbers of a text (a claim, a written section) against the
   * cited outputs only (`S1:E3`). Markdown headings do not count section
   * numbers and years as claims (as in the single run's report).
   */
  ground(text: string, citedOutputs: readonly string[]): EvidenceNumber[] {
    const index = buildNumberIndex(this.sourcesFor(citedOutputs));
    const numbers: EvidenceNumber[] = [];
    for (const line of text.split('\n')) {
      const heading = /^\s{0,3}#{1,6}\s/.exec(line);
      const segment = heading === null ? line : line.slice(heading[0].length);
      for (const mention of findNumberMentions(segment, { inHeading: heading !== null, atLineStart: true })) {
        const grounded = groundMention(mention, index);
        numbers.push({
          text: grounded.text,
          output: grounded.verified ? grounded.outputId : null,
          verified: grounded.verified,
        });
      }
    }
    return numbers;
  }

  private sourcesFor(citedOutputs: readonly string[]): GroundingSource[] {
    const sources: GroundingSource[] = [];
    for (const cited of citedOutputs) {
      const [subAnalysisId, outputId] = cited.split(':');
      const execution = this.executionsBySub
        .get(subAnalysisId ?? '')
        ?.find((candidate) => candidate.outputId === outputId);
      if (execution === undefined) continue;
      for (const source of groundingSources([execution]))
        sources.push({ outputId: cited, text: source.text });
    }
    return sources;
  }
}
