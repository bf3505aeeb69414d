import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** highlight.js's GitHub theme, inlined so that the report needs no network. */
const highlightCss = readFileSync(require.resolve('highlight.js/styles/github.css'), 'utf8').replace(
  /\/\*[\s\S]*?\*\//g,
  '',
);

const reportCss = `
:root { --text: #1f2328; --muted: #59636e; --line: #d1d9e0; --soft: #f6f8fa; --accent: #0969da; --ok: #1a7f37; --warn: #9a6700; --bad: #cf222e; }
* { box-sizing: border-box; }
html { font-size: 16px; }
body { margin: 0; color: var(--text); background: #fff; font: 1rem/1.55 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", Roboto, sans-serif; }
main { max-width: 62rem; margin: 0 auto; padding: 1.5rem 1.5rem 4rem; }
h1 { font-size: 1.7rem; line-height: 1.25; margin: 0 0 .35rem; }
h2 { font-size: 1.3rem; margin: 2.2rem 0 .8rem; padding-bottom: .3rem; border-bottom: 1px solid var(--line); }
h3 { font-size: 1.05rem; margin: 1.4rem 0 .5rem; }
.turn-heading { font-size: 1.15rem; margin: 2.4rem 0 .6rem; padding: .4rem .6rem; background: var(--soft); border-left: 4px solid var(--accent); }
.turn { margin: 1rem 0 1.6rem; }
a { color: var(--accent); }
code, pre, .mono { font-family: ui-monospace, "DejaVu Sans Mono", SFMono-Regular, Menlo, Consolas, monospace; font-size: .85rem; }
pre { margin: .4rem 0; padding: .7rem .9rem; background: var(--soft); border: 1px solid var(--line); border-radius: 6px; overflow: auto; white-space: pre; }
.subtitle { color: var(--muted); margin: 0 0 1rem; font-size: .93rem; }
.banner { border-radius: 6px; padding: .7rem 1rem; margin: .8rem 0; border: 1px solid; font-weight: 500; }
.banner-offline { background: #ddf4ff; border-color: #54aeff; }
.banner-outcome { background: #fff1e5; border-color: #fb8f44; font-size: 1.05rem; }
.banner-cancelled, .banner-incomplete { background: #ffebe9; border-color: #ff8182; }
.label { margin: 1rem 0 .3rem; font-size: .78rem; font-weight: 700; letter-spacing: .05em; text-transform: uppercase; color: var(--muted); }
.instruction { margin: 0; padding: .6rem 1rem; border-left: 4px solid var(--accent); background: var(--soft); white-space: pre-wrap; }
nav.toc { margin: 1rem 0; font-size: .93rem; color: var(--muted); }
nav.toc a { margin-right: 1rem; }
.grounding { font-size: .93rem; padding: .5rem .8rem; border-radius: 6px; background: var(--soft); border: 1px solid var(--line); }
.answer { overflow-wrap: anywhere; }
.answer table, .markdown table { border-collapse: collapse; }
.answer td, .answer th, .markdown td, .markdown th { border: 1px solid var(--line); padding: .2rem .5rem; }
.num { border-radius: 3px; padding: 0 .1rem; }
.num sup { font-size: .62em; margin-left: .1em; }
.num-verified { color: inherit; text-decoration: none; border-bottom: 1px dotted var(--ok); }
.num-verified sup { color: var(--ok); }
.num-unverified { background: #fff8c5; border-bottom: 1px dashed var(--warn); }
.num-unverified sup { color: var(--warn); font-weight: 700; }
.image-omitted { color: var(--muted); font-style: italic; }
.gallery { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 28rem), 1fr)); gap: 1rem; align-items: start; }
.gallery figure.wide { grid-column: 1 / -1; }
figure { margin: 0; padding: .6rem; border: 1px solid var(--line); border-radius: 6px; background: #fff; break-inside: avoid; overflow-x: auto; }
figure svg, figure img { display: block; max-width: 100%; height: auto; margin: 0 auto; }
figcaption { font-size: .85rem; color: var(--muted); margin-top: .4rem; }
.chart-error { border: 1px solid var(--bad); background: #ffebe9; color: #82071e; border-radius: 6px; padding: .6rem .8rem; font-size: .9rem; }
.note { color: var(--warn); font-size: .85rem; margin: .3rem 0; }
.step { margin: 1rem 0; padding: .2rem 0 .2rem 1rem; border-left: 3px solid var(--line); }
.step > h3 { margin-top: .2rem; }
.step-analyze { border-left-color: #8250df; }
.step-understand { border-left-color: #bf8700; }
.step-code { border-left-color: var(--accent); }
.step-answer { border-left-color: var(--ok); }
.step-notice { border-left-color: #fb8f44; color: var(--muted); font-size: .93rem; }
.step-text { color: var(--muted); }
.kind { display: inline-block; font-size: .72rem; font-weight: 700; letter-spacing: .04em; text-transform: uppercase; padding: .05rem .45rem; border-radius: 1rem; background: var(--soft); border: 1px solid var(--line); margin-right: .4rem; vertical-align: middle; }
.output { margin-top: .5rem; }
.output-id { display: inline-block; font: 700 .8rem/1.4 ui-monospace, "DejaVu Sans Mono", monospace; color: #fff; background: var(--accent); border-radius: 4px; padding: 0 .4rem; margin-right: .4rem; }
.status { font-size: .85rem; color: var(--muted); }
.status-error, .status-timeout, .status-memory, .status-crashed, .status-output-limit, .status-cancelled { color: var(--bad); font-weight: 600; }
pre code.hljs { padding: 0; background: transparent; }
.answer h1, .answer h2, .answer h3 { font-size: 1.1rem; border: none; margin: 1.2rem 0 .4rem; padding: 0; }
.output figure { max-width: 40rem; }
.output figure.wide { max-width: none; }
pre.stdout { max-height: 28rem; }
pre.stderr { background: #fff8f0; max-height: 14rem; }
pre.error { background: #ffebe9; border-color: #ff8182; max-height: 20rem; }
.table-wrap { overflow: auto; max-height: 26rem; border: 1px solid var(--line); border-radius: 6px; margin: .4rem 0; }
table.data { border-collapse: collapse; font-size: .82rem; }
table.data th, table.data td { padding: .2rem .5rem; border-bottom: 1px solid var(--line); text-align: right; white-space: nowrap; }
table.data th { background: var(--soft); position: sticky; top: 0; }
table.data tbody th { text-align: left; position: static; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1.2rem; margin: 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
table.files { border-collapse: collapse; font-size: .85rem; width: 100%; }
table.files th, table.files td { border-bottom: 1px solid var(--line); padding: .25rem .5rem; text-align: left; vertical-align: top; }
table.files td.hash { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: .75rem; overflow-wrap: anywhere; }
footer { margin-top: 3rem; color: var(--muted); font-size: .85rem; }
@media (max-width: 40rem) { main { padding: 1rem; } dl.facts { grid-template-columns: 1fr; } }
@media print {
  @page { margin: 1.6cm; }
  html { font-size: 11pt; }
  main { max-width: none; padding: 0; }
  nav.toc { display: none; }
  pre, pre.stdout, pre.stderr, pre.error, .table-wrap { max-height: none; overflow: visible; white-space: pre-wrap; overflow-wrap: anywhere; }
  table.data th { position: static; }
  figure, .output, .banner { break-inside: avoid; }
  h2, h3 { break-after: avoid; }
  a { color: inherit; text-decoration: none; }
  .num-verified { background: none; }
  .num-unverified { background: none; }
}
`;

export const reportStyles = `${reportCss}\n${highlightCss}`;
