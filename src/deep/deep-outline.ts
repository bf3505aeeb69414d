import type { EvidenceItem, OutlineSection, SubAnalysisRecord } from './deep-schema.ts';
import type { OutlineDraft } from './deep-roles.ts';

/** The planner's sections with ids, citing only evidence that exists (each id once). */
export function numberSections(draft: OutlineDraft, known: ReadonlySet<string>): OutlineSection[] {
  return draft.sections
    .filter((section) => section.title.trim().length > 0)
    .map((section, index) => ({
      id: `SEC${index + 1}`,
      title: section.title.trim(),
      purpose: section.purpose,
      evidenceIds: [...new Set(section.evidenceIds.map((id) => id.trim()))].filter((id) => known.has(id)),
    }));
}

const clip = (text: string, chars: number) => (text.length <= chars ? text : `${text.slice(0, chars - 1)}…`);

/** When the planner failed: one section per sub-analysis that found something, citing its evidence. */
export function fallbackSections(subAnalyses: readonly SubAnalysisRecord[]): OutlineSection[] {
  return subAnalyses
    .filter((sub) => sub.evidenceIds.length > 0)
    .map((sub, index) => ({
      id: `SEC${index + 1}`,
      title: clip(sub.question, 100),
      purpose: `What sub-analysis ${sub.id} found.`,
      evidenceIds: [...sub.evidenceIds],
    }));
}

/** A section that could not be written: its evidence, listed, each claim with its id. */
export function evidenceListing(evidence: readonly EvidenceItem[]): string {
  if (evidence.length === 0) return 'No evidence was given to this section.';
  return evidence.map((item) => `- ${item.claim} [${item.id}]`).join('\n');
}

const citationGroup = /\[(EV\d+(?:\s*[,;]\s*EV\d+)*)\]/g;

/**
 * Keeps the citations a section may make: `[EV3]`, or `[EV1, EV2]` split into
 * `[EV1][EV2]`. An id the section was not given is no citation: it stays as
 * text, out of brackets, so no link points at evidence the writer never saw.
 */
export function checkCitations(
  markdown: string,
  allowed: ReadonlySet<string>,
): { markdown: string; cited: string[] } {
  const cited: string[] = [];
  const text = markdown.replace(citationGroup, (_match, group: string) => {
    const ids = group.split(/\s*[,;]\s*/);
    const kept = ids.filter((id) => allowed.has(id));
    const foreign = ids.filter((id) => !allowed.has(id));
    for (const id of kept) if (!cited.includes(id)) cited.push(id);
    return (
      kept.map((id) => `[${id}]`).join('') +
      (foreign.length === 0 ? '' : ` (${foreign.join(', ')}: not among this section's evidence)`)
    );
  });
  return { markdown: text, cited };
}
