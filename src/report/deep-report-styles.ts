import { reportStyles } from './report-styles.ts';

/** The single report's styles, plus the deep report's own parts (brief, sections, evidence, sub-analyses). */
export const deepReportStyles = `${reportStyles}
ol.brief li { margin: .35rem 0; }
/* Table names (student_loan.sqlite#longest_absense_from_school) have no break point: at 390 px they made the page scroll sideways. */
.mono, .tables, .brief-question, .markdown code, .evidence-sources, .sub-head h3, .sub-head .detail, dl.facts dd { overflow-wrap: anywhere; }
li.not-researched .brief-question { color: var(--muted, #59636e); }
.not-researched-mark { font-size: .78rem; font-weight: 700; text-transform: uppercase; letter-spacing: .04em; color: #9a6700; border: 1px solid #d4a72c; border-radius: 3px; padding: 0 .3rem; white-space: nowrap; }
.banner-unresearched { background: #fff8c5; border-color: #d4a72c; }
.tables { color: var(--muted, #59636e); font-size: .9rem; }
.good-answer { font-style: italic; }
#summary { margin-top: .8rem; }
#summary .answer ul, ul.cannot-answer { margin: .3rem 0 .6rem; padding-left: 1.3rem; }
ul.cannot-answer li { color: #9a6700; }
.summary-limits { font-size: .88rem; }
.deep-section { margin-top: 1.2rem; }
.cites { color: var(--muted, #59636e); font-size: .9rem; }
ol.evidence { list-style: none; padding-left: 0; }
.evidence-item { border: 1px solid var(--line, #d1d9e0); border-radius: 6px; padding: .5rem .8rem; margin: .5rem 0; }
.evidence-item:target, .output:target, figure:target { outline: 3px solid var(--accent, #0969da); }
.evidence-id { font-weight: 600; font-family: ui-monospace, "DejaVu Sans Mono", monospace; margin-right: .5rem; }
.claim { display: inline; }
.claim p { display: inline; margin: 0; }
.evidence-sources { color: var(--muted, #59636e); font-size: .88rem; margin: .3rem 0 0; }
.sub-analysis { border-left: 4px solid var(--line, #d1d9e0); padding: .2rem 0 .2rem .9rem; margin: 1.4rem 0; }
.sub-answered { border-left-color: var(--ok, #1a7f37); }
.sub-incomplete, .sub-cancelled { border-left-color: var(--warn, #9a6700); }
.sub-failed, .sub-skipped { border-left-color: var(--bad, #cf222e); }
details.cells > summary, details.sub-answer > summary { cursor: pointer; font-weight: 600; margin: .4rem 0; }
figure.figure img { max-width: 100%; height: auto; }
.print-only { display: none; }
/*
 * Paper. The single report's print rules (above) already hide the contents bar
 * and the overlays, open every <details>, keep figures, outputs and table rows
 * whole and headings with what follows. The deep report adds its own parts.
 * The sub-analyses' cells print their outputs (the S1:E5 the evidence cites,
 * figures included) but not their code: the offline analyst's helpers alone
 * repeat ten pages per sub-analysis (91 pages for the student-loan example,
 * three quarters of them code), and the code is one click away in report.html
 * and analysis.ipynb, which the note at the head of the sub-analyses says.
 */
@media print {
  .print-only { display: block; }
  /* Whole where they fit; a section longer than a page (its figures) breaks between its blocks. */
  .deep-section, .evidence-item, .sub-head, ol.brief li { break-inside: avoid; }
  h4, details.cells > summary, details.sub-answer > summary { break-after: avoid; }
  .step-code > pre, .step-code h4 .kind { display: none; }
  .evidence-item:target, .output:target, figure:target { outline: none; }
  /* An outside link shows where it goes; the in-page ones ([EV3], S1:E5) name their target already. */
  .markdown a[href^="http"]::after, .markdown a[href^="mailto:"]::after { content: " <" attr(href) ">"; font-size: .85em; overflow-wrap: anywhere; }
}
`;
